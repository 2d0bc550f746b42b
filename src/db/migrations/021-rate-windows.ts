import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Request-rate windows shared by the nodes of one PostgreSQL database (see
 * SharedRateLimiter): one row per counted key, its window's start (ms) and its count. SQLite
 * serves one node, whose windows stay in its memory: the table is made there too, unused, so
 * both schemas are the same. UNLOGGED on PostgreSQL: the counts are worth less than the
 * writes to its log, and a crash of the server merely starts every window afresh.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const unlogged = isPostgres(db) ? sql`UNLOGGED ` : sql``;
  await sql`CREATE ${unlogged}TABLE rate_windows (
    key TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    count BIGINT NOT NULL
  )`.execute(db);
}
