import type { Kysely } from "kysely";

/**
 * Agents' custom HTTP tools (`tools`): a JSON array of {name, description, parameters, url,
 * method, timeout_ms, headers, signing_secret}. Header values keep `{{secrets.NAME}}` as given:
 * secrets' values live in `secrets` (migration 027) and are filled in only when a tool is called.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("tools", "text", (c) => c.notNull().defaultTo("[]")).execute();
}
