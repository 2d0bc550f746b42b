import type { Kysely } from "kysely";

/** Agents' hand-offs (`handoffs`): a JSON array of {agent_id, description}, the agents of the account a call may be passed to. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("handoffs", "text", (c) => c.notNull().defaultTo("[]")).execute();
}
