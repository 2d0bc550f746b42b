import { sql, type Kysely } from "kysely";

/**
 * Browser call tokens (`POST /v1/calls/web`): a browser's WebSocket cannot send an
 * Authorization header, so it connects with a short-lived, single-use token bound to one
 * account, agent and call id. Only the token's SHA-256 is stored. `used_at` is set by the one
 * conditional UPDATE that redeems it. Tokens are read by hash, and an account's are counted
 * (the cap on unused ones) and purged by expiry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("web_call_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("call_id", "text", (c) => c.notNull().unique())
    .addColumn("context", "text", (c) => c.notNull())
    .addColumn("record", "integer", (c) => c.notNull())
    .addColumn("max_duration", "integer", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX web_call_tokens_account_expiry ON web_call_tokens (account_id, expires_at)`.execute(db);
}
