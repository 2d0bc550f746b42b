import type { Kysely } from "kysely";

/**
 * The event outbox: every webhook event is stored here in the same transaction as the change
 * it reports, so a crash cannot lose one. Delivery reads from here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("call_id", "text")
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("events_account_created").on("events").columns(["account_id", "created_at", "id"]).execute();
  await db.schema.createIndex("events_call").on("events").column("call_id").execute();
}
