import type { Kysely } from "kysely";

/** Agents' knowledge bases (`knowledge_base_ids`): a JSON array of ids (migration 029) whose documents the agent answers from. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("knowledge_base_ids", "text", (c) => c.notNull().defaultTo("[]")).execute();
}
