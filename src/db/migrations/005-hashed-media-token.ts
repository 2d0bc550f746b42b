import { createHash } from "node:crypto";
import { sql, type Kysely } from "kysely";

/**
 * The media token (it opens `/media/twilio` calls) is kept like an API key: only its SHA-256
 * hex, with the time it was made. Existing tokens are hashed in place, so a TwiML that holds
 * today's token keeps working until the operator rotates it; the plain-text column goes.
 * The hash is computed here rather than with the application's helper: a shipped migration
 * must not change with later code.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("accounts").addColumn("media_token_hash", "text").execute();
  await db.schema.alterTable("accounts").addColumn("media_token_created_at", "text").execute();
  const rows = await sql<{ id: string; media_token: string; created_at: string }>`SELECT id, media_token, created_at FROM accounts`.execute(db);
  for (const row of rows.rows) {
    if (!row.media_token) continue;
    const hash = createHash("sha256").update(row.media_token).digest("hex");
    await sql`UPDATE accounts SET media_token_hash = ${hash}, media_token_created_at = ${row.created_at} WHERE id = ${row.id}`.execute(db);
  }
  await sql`ALTER TABLE accounts DROP COLUMN media_token`.execute(db);
  await sql`CREATE UNIQUE INDEX accounts_media_token_hash ON accounts (media_token_hash)`.execute(db);
}
