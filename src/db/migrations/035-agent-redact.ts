import type { Kysely } from "kysely";

/**
 * Agents' `redact` (issue 32): a JSON array of what their calls' stored transcripts, analyses,
 * events and recordings must not keep (kinds such as `card_number`, or `{name, pattern}` rules).
 * Stored agents redact nothing, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("redact", "text", (c) => c.notNull().defaultTo("[]")).execute();
}
