import type { Kysely } from "kysely";

/** Agents' `transfer_mode`: `cold` (the carrier's transfer, what every agent did before) or `warm` (Parley briefs the human first). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("transfer_mode", "text", (c) => c.notNull().defaultTo("cold")).execute();
}
