import { sql, type Kysely } from "kysely";

/**
 * The counts a node took from a request-rate window by its last statement (see
 * SharedRateLimiter): it takes several at once and hands them out itself, so the window's
 * row is written once for many requests. Kept on the row because the statement that adds
 * them reads the count before adding, which its RETURNING clause cannot give back.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE rate_windows ADD COLUMN leased BIGINT NOT NULL DEFAULT 0`.execute(db);
}
