import type { Kysely } from "kysely";

/**
 * Agents' intents (`intents`): a JSON array of {examples, tool, slots, reply, failure}, requests
 * the `rules` dialogue answers by calling one of the agent's tools (migration 028).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("intents", "text", (c) => c.notNull().defaultTo("[]")).execute();
}
