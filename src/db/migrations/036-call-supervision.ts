import type { Kysely } from "kysely";

/**
 * Live supervision (issue 32):
 * - `call_commands.payload`: what a command carries besides its name (the text of a `say` or a
 *   `whisper` sent to the node that runs the call); null for `end` and `hand_back`.
 * - `listen_tokens`: single-use tokens a browser opens `/media/listen` with (a page cannot put an
 *   API key in a WebSocket's headers). Stored hashed, bound to one call, its mode (`listen` or
 *   `takeover`) and a minute of life; used by one conditional UPDATE, so a token works once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("call_commands").addColumn("payload", "text").execute();
  await db.schema
    .createTable("listen_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("call_id", "text", (c) => c.notNull())
    .addColumn("mode", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("listen_tokens_account_expiry").on("listen_tokens").columns(["account_id", "expires_at"]).execute();
}
