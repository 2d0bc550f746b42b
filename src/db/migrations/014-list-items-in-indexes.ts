import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Each list's index holds each row's list item as the JSON text the list sends: a page reads
 * the items from the index instead of SQLite writing every item afresh at every read (about
 * half of a page query's time). The expressions are the repositories' list items (AGENT_,
 * CALL_ and PHONE_NUMBER_LIST_ITEM, jsonObject) written out as they were when this migration
 * shipped: SQLite uses an indexed expression only where the query's is the same. If an item
 * changes, SQLite goes back to writing the items at each read (still correct, slower), the
 * plan test fails, and a new migration indexes the new expression.
 *
 * The indexes keep the keyset and every filter's column; the item's other columns are inside
 * the expression. SQLite recomputes an item only when a write changes a column it is made of
 * (a live call's transcript updates do not). The phone number list gets its index here; the
 * agent and call lists' indexes (013) are made again with the item.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    // PostgreSQL writes each page's items at the read (json-object.ts): the phone number list
    // gets its keyset index, under the name SQLite's has.
    await sql`CREATE INDEX phone_numbers_list ON phone_numbers (account_id, created_at, id)`.execute(db);
    await sql`DROP INDEX phone_numbers_account_created`.execute(db);
    return;
  }
  await sql`DROP INDEX agents_list`.execute(db);
  await sql`CREATE INDEX agents_list ON agents (account_id, created_at, id, status, name, deleted_at, json_object('id', "id", 'name', "name", 'voice_id', "voice_id", 'language', "language", 'model', "model", 'status', "status", 'created_at', "created_at", 'updated_at', "updated_at")) WHERE deleted_at IS NULL`.execute(db);
  await sql`DROP INDEX calls_list`.execute(db);
  await sql`CREATE INDEX calls_list ON calls (account_id, created_at, id, status, outcome, direction, phone_number, agent_id, json_object('id', "id", 'status', "status", 'direction', "direction", 'phone_number', "phone_number", 'from_number', "from_number", 'agent_id', "agent_id", 'duration', "duration", 'metadata', json(coalesce(nullif("metadata", 'null'), '{}')), 'created_at', "created_at", 'ended_at', "ended_at"))`.execute(db);
  await sql`CREATE INDEX phone_numbers_list ON phone_numbers (account_id, created_at, id, status, country, json_object('id', "id", 'phone_number', "phone_number", 'friendly_name', "friendly_name", 'country', "country", 'region', "region", 'capabilities', json_object('voice', json(CASE WHEN "capability_voice" THEN 'true' ELSE 'false' END), 'sms', json(CASE WHEN "capability_sms" THEN 'true' ELSE 'false' END)), 'status', "status", 'default_agent_id', "default_agent_id", 'created_at', "created_at", 'updated_at', "updated_at"))`.execute(db);
  await sql`DROP INDEX phone_numbers_account_created`.execute(db);
}
