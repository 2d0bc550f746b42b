import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Each phone number records the carrier it is held at (issue 28): `phone_numbers.carrier`, one
 * of CARRIERS in config.ts, or NULL for "the service's default" (PARLEY_CARRIER). Every existing
 * number gets NULL, so it keeps working as it did and follows the setting if the operator
 * changes it; a number added with `parley admin number add --carrier` names its own.
 *
 * On SQLite the phone number list's index (014) holds each row's list item, which now has
 * `carrier`: the index is made again with the item written out as PHONE_NUMBER_LIST_ITEM is
 * (the stored NULL; the service writes the default into the page). PostgreSQL writes the
 * items at each read and keeps its keyset index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE phone_numbers ADD COLUMN carrier TEXT`.execute(db);
  if (isPostgres(db)) return;
  await sql`DROP INDEX phone_numbers_list`.execute(db);
  await sql`CREATE INDEX phone_numbers_list ON phone_numbers (account_id, created_at, id, status, country, json_object('id', "id", 'phone_number', "phone_number", 'friendly_name', "friendly_name", 'country', "country", 'region', "region", 'capabilities', json_object('voice', json(CASE WHEN "capability_voice" THEN 'true' ELSE 'false' END), 'sms', json(CASE WHEN "capability_sms" THEN 'true' ELSE 'false' END)), 'carrier', "carrier", 'status', "status", 'default_agent_id', "default_agent_id", 'created_at', "created_at", 'updated_at', "updated_at"))`.execute(db);
}
