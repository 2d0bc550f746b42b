import type { Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Test audio (issue 32): recordings an account uploads for its agent test runs' callers to play
 * (a scenario line `{audio_id}` instead of text). Kept in the database, not the data directory,
 * so every node sharing it can play them: PCM16 little-endian at 8 kHz, as the runs' phone line
 * carries it (BLOB on SQLite, bytea on PostgreSQL).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("test_audio")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("samples", isPostgres(db) ? "bytea" : "blob", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("test_audio_list").on("test_audio").columns(["account_id", "created_at", "id"]).execute();
}
