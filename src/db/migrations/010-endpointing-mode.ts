import type { Kysely } from "kysely";

/**
 * How an agent decides that the caller's turn has ended (`adaptive` or `fixed`, see the
 * engine's `AgentSettings.endpointingMode`). Agents stored before this migration become
 * `fixed` with their `endpointing_ms` unchanged: they behave exactly as before (no silent
 * change for integrators); only agents created through the API from now on default to
 * `adaptive`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("endpointing_mode", "text", (c) => c.notNull().defaultTo("fixed")).execute();
}
