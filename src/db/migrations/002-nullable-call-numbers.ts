import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Web calls (browser or `parley talk`) have no phone numbers: `phone_number` and
 * `from_number` become nullable. SQLite cannot drop NOT NULL in place, so the table is
 * rebuilt with its rows and indexes; PostgreSQL can.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`ALTER TABLE calls ALTER COLUMN phone_number DROP NOT NULL, ALTER COLUMN from_number DROP NOT NULL`.execute(db);
    return;
  }
  await sql`
    CREATE TABLE calls_new (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      agent_id text NOT NULL,
      campaign_id text,
      direction text NOT NULL,
      status text NOT NULL,
      phone_number text,
      from_number text,
      metadata text NOT NULL,
      context text NOT NULL,
      record integer NOT NULL,
      max_duration integer NOT NULL,
      webhook_url text,
      duration integer,
      transcript text,
      recording_path text,
      analysis text,
      billed_credits integer,
      created_at text NOT NULL,
      answered_at text,
      ended_at text,
      updated_at text NOT NULL
    )`.execute(db);
  await sql`INSERT INTO calls_new SELECT id, account_id, agent_id, campaign_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, webhook_url, duration, transcript, recording_path, analysis, billed_credits, created_at, answered_at, ended_at, updated_at FROM calls`.execute(db);
  await sql`DROP TABLE calls`.execute(db);
  await sql`ALTER TABLE calls_new RENAME TO calls`.execute(db);
  await db.schema.createIndex("calls_account_created").on("calls").columns(["account_id", "created_at", "id"]).execute();
  await db.schema.createIndex("calls_agent_status").on("calls").columns(["agent_id", "status"]).execute();
  await db.schema.createIndex("calls_account_status").on("calls").columns(["account_id", "status"]).execute();
}
