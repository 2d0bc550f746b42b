import { sql, type Kysely } from "kysely";
import { rewriteStoredRows } from "./stored-rows.js";

/**
 * Webhook delivery. Every event gets a sequence number, increasing in the order events were
 * stored, for receivers to order by. Each (event, receiver) pair gets a delivery row, written
 * in the event's transaction, so a crash between the event and its first attempt loses
 * nothing; each attempt leaves a row in `delivery_attempts` (the delivery log).
 * An account may have its own `credits.low` threshold (null: the configured default).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("accounts").addColumn("low_balance_threshold", "integer").execute();
  await db.schema.alterTable("events").addColumn("seq", "integer").execute();
  await rewriteStoredRows(db, () => sql`UPDATE events SET seq = rowid`.execute(db));
  await db.schema.createIndex("events_seq").unique().on("events").column("seq").execute();
  await db.schema.createIndex("events_account_name").on("events").columns(["account_id", "name", "created_at", "id"]).execute();

  await db.schema
    .createTable("deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("event_id", "text", (c) => c.notNull().references("events.id"))
    // Null for a call's own `webhook_url`, which then sits in `url`.
    .addColumn("webhook_id", "text")
    .addColumn("url", "text")
    // Who receives it (the webhook, or the call's URL): the worker bounds work per receiver.
    .addColumn("receiver", "text", (c) => c.notNull())
    .addColumn("event_name", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempt_count", "integer", (c) => c.notNull().defaultTo(0))
    // Milliseconds since the epoch: compared with the clock on every poll.
    .addColumn("next_attempt_at", "integer")
    .addColumn("lease_until", "integer")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("completed_at", "text")
    .execute();
  // The worker's polls walk these in due order: cheap however long the backlog.
  await sql`CREATE INDEX deliveries_pending ON deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX deliveries_sending ON deliveries (lease_until) WHERE status = 'sending'`.execute(db);
  await db.schema.createIndex("deliveries_webhook").on("deliveries").columns(["webhook_id", "created_at", "id"]).execute();
  await db.schema.createIndex("deliveries_event").on("deliveries").column("event_id").execute();

  await db.schema
    .createTable("delivery_attempts")
    .addColumn("delivery_id", "text", (c) => c.notNull().references("deliveries.id").onDelete("cascade"))
    .addColumn("number", "integer", (c) => c.notNull())
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("error", "text")
    .addColumn("response_body", "text")
    .addPrimaryKeyConstraint("delivery_attempts_pk", ["delivery_id", "number"])
    .execute();
}
