import { sql, type Kysely } from "kysely";

/**
 * The campaign runner. Campaigns gain the settings that govern dialling (from number,
 * attempts, retry delay, calling hours, time zone), why they are paused, and when they
 * started and finished. Contacts gain their time zone (given, and the zone key the runner
 * uses), when a retry is due, how many attempts failed, and why they ended as they did; the
 * contact status `in_progress` is now `calling`. Calls know the contact they dial, so a
 * contact's attempts are its calls. An account keeps a do-not-call list.
 *
 * Campaigns stored before this migration were never dialled (nothing dialled them): they
 * are paused with reason `upgrade` rather than starting to call on the upgrade; `resume`
 * starts them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("campaigns").addColumn("from_number", "text").execute();
  await db.schema.alterTable("campaigns").addColumn("max_attempts", "integer", (c) => c.notNull().defaultTo(3)).execute();
  await db.schema.alterTable("campaigns").addColumn("retry_delay_minutes", "integer", (c) => c.notNull().defaultTo(60)).execute();
  // JSON {start, end, days}; null: the default hours.
  await db.schema.alterTable("campaigns").addColumn("calling_hours", "text").execute();
  await db.schema.alterTable("campaigns").addColumn("timezone", "text").execute();
  await db.schema.alterTable("campaigns").addColumn("paused_reason", "text").execute();
  await db.schema.alterTable("campaigns").addColumn("started_at", "text").execute();
  await db.schema.alterTable("campaigns").addColumn("finished_at", "text").execute();
  await sql`UPDATE campaigns SET status = 'paused', paused_reason = 'upgrade' WHERE status IN ('scheduled', 'running')`.execute(db);
  await sql`CREATE INDEX campaigns_active ON campaigns (status) WHERE status IN ('scheduled', 'running')`.execute(db);

  await db.schema.alterTable("campaign_contacts").addColumn("timezone", "text").execute();
  // The zone key the calling hours are read in (see calling-hours.ts); null until resolved.
  await db.schema.alterTable("campaign_contacts").addColumn("zone", "text").execute();
  await db.schema.alterTable("campaign_contacts").addColumn("next_attempt_at", "integer").execute();
  await db.schema.alterTable("campaign_contacts").addColumn("failures", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("campaign_contacts").addColumn("reason", "text").execute();
  await sql`UPDATE campaign_contacts SET status = 'calling' WHERE status = 'in_progress'`.execute(db);
  await db.schema.createIndex("campaign_contacts_status").on("campaign_contacts").columns(["campaign_id", "status", "position"]).execute();

  await db.schema.alterTable("calls").addColumn("contact_id", "text").execute();
  await db.schema.createIndex("calls_contact").on("calls").columns(["contact_id", "created_at"]).execute();
  await db.schema.createIndex("calls_campaign_status").on("calls").columns(["campaign_id", "status"]).execute();

  await db.schema
    .createTable("do_not_call")
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("phone_number", "text", (c) => c.notNull())
    // `api` (added through the API) or `callee_request` (the callee asked on a call).
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("call_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("do_not_call_pk", ["account_id", "phone_number"])
    .execute();
  await db.schema.createIndex("do_not_call_account_created").on("do_not_call").columns(["account_id", "created_at", "id"]).execute();
}
