import { sql, type Kysely } from "kysely";

/** The first schema: every table of the control plane. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("plan", "text", (c) => c.notNull())
    .addColumn("credit_balance", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("signing_secret", "text", (c) => c.notNull())
    .addColumn("media_token", "text", (c) => c.notNull())
    .addColumn("limit_overrides", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("key_prefix", "text", (c) => c.notNull())
    .addColumn("permissions", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_used_at", "text")
    .addColumn("revoked_at", "text")
    .execute();
  await db.schema.createIndex("api_keys_account").on("api_keys").column("account_id").execute();

  await db.schema
    .createTable("agents")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("system_prompt", "text", (c) => c.notNull())
    .addColumn("voice_id", "text", (c) => c.notNull())
    .addColumn("first_message", "text")
    .addColumn("language", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("temperature", "real", (c) => c.notNull())
    .addColumn("max_tokens", "integer", (c) => c.notNull())
    .addColumn("interruption_threshold", "real", (c) => c.notNull())
    .addColumn("end_call_phrases", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("metadata", "text", (c) => c.notNull())
    .addColumn("transfer_enabled", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("transfer_number", "text")
    .addColumn("transfer_message", "text", (c) => c.notNull())
    .addColumn("endpointing_ms", "integer", (c) => c.notNull().defaultTo(500))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("deleted_at", "text")
    .execute();
  await db.schema.createIndex("agents_account_created").on("agents").columns(["account_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("phone_numbers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("phone_number", "text", (c) => c.notNull())
    .addColumn("friendly_name", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("region", "text")
    .addColumn("capability_voice", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("capability_sms", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("default_agent_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("phone_numbers_account_created").on("phone_numbers").columns(["account_id", "created_at", "id"]).execute();
  // A number can be held (active or pending) by one account at a time; released rows stay.
  await sql`CREATE UNIQUE INDEX phone_numbers_held ON phone_numbers (phone_number) WHERE status <> 'inactive'`.execute(db);

  await db.schema
    .createTable("calls")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("campaign_id", "text")
    .addColumn("direction", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("phone_number", "text", (c) => c.notNull())
    .addColumn("from_number", "text", (c) => c.notNull())
    .addColumn("metadata", "text", (c) => c.notNull())
    .addColumn("context", "text", (c) => c.notNull())
    .addColumn("record", "integer", (c) => c.notNull())
    .addColumn("max_duration", "integer", (c) => c.notNull())
    .addColumn("webhook_url", "text")
    .addColumn("duration", "integer")
    .addColumn("transcript", "text")
    .addColumn("recording_path", "text")
    .addColumn("analysis", "text")
    .addColumn("billed_credits", "integer")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("answered_at", "text")
    .addColumn("ended_at", "text")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("calls_account_created").on("calls").columns(["account_id", "created_at", "id"]).execute();
  await db.schema.createIndex("calls_agent_status").on("calls").columns(["agent_id", "status"]).execute();
  await db.schema.createIndex("calls_account_status").on("calls").columns(["account_id", "status"]).execute();

  await db.schema
    .createTable("webhooks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("metadata", "text", (c) => c.notNull())
    .addColumn("consecutive_failures", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhooks_account_created").on("webhooks").columns(["account_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("campaigns")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("max_concurrent", "integer", (c) => c.notNull())
    .addColumn("retry_no_answer", "integer", (c) => c.notNull())
    .addColumn("schedule", "text")
    .addColumn("contact_count", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("campaigns_account_created").on("campaigns").columns(["account_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("campaign_contacts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("campaign_id", "text", (c) => c.notNull().references("campaigns.id"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("phone", "text", (c) => c.notNull())
    .addColumn("context", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("call_id", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("campaign_contacts_campaign").on("campaign_contacts").columns(["campaign_id", "position"]).execute();

  await db.schema
    .createTable("appointments")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("call_id", "text")
    .addColumn("agent_id", "text")
    .addColumn("customer_name", "text")
    .addColumn("customer_phone", "text")
    .addColumn("customer_email", "text")
    .addColumn("date", "text", (c) => c.notNull())
    .addColumn("time", "text", (c) => c.notNull())
    .addColumn("service", "text")
    .addColumn("duration_minutes", "integer", (c) => c.notNull())
    .addColumn("notes", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("appointments_account_created").on("appointments").columns(["account_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("ledger")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("amount", "integer", (c) => c.notNull())
    .addColumn("balance_after", "integer", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("call_id", "text")
    .addColumn("description", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("ledger_account_created").on("ledger").columns(["account_id", "created_at", "id"]).execute();
  // A call is charged at most once: the database itself refuses a second charge.
  await sql`CREATE UNIQUE INDEX ledger_one_charge_per_call ON ledger (call_id) WHERE reason = 'call'`.execute(db);

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("path", "text", (c) => c.notNull())
    .addColumn("idempotency_key", "text", (c) => c.notNull())
    .addColumn("body_hash", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("response_body", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "method", "path", "idempotency_key"])
    .execute();
  await db.schema.createIndex("idempotency_keys_created").on("idempotency_keys").column("created_at").execute();
}
