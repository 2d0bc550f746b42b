import { sql, type Kysely } from "kysely";

/**
 * Single-use tokens a carrier's media stream presents (CarrierStreamTokens): Parley writes one
 * into the TwiML (or NCCO) it answers a carrier with, so no account secret is ever written
 * there, and the stream that comes back with it is the call it was issued for. Only the
 * token's SHA-256 is stored; `used_at` is set by the one conditional UPDATE that redeems it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("carrier_stream_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("carrier", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("direction", "text", (c) => c.notNull())
    .addColumn("call_id", "text")
    .addColumn("agent_id", "text")
    .addColumn("phone_number", "text")
    .addColumn("from_number", "text")
    .addColumn("carrier_call_id", "text")
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX carrier_stream_tokens_expiry ON carrier_stream_tokens (expires_at)`.execute(db);
}
