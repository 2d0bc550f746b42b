import type { Kysely } from "kysely";

/**
 * `reminder_call_inbound` on agents: whether a reminder call may dial the number an inbound
 * caller's caller ID gave when they booked (caller IDs can be forged). Off for every agent,
 * those stored before included: from this version, reminder calls go to such numbers only
 * when the agent says so.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("reminder_call_inbound", "integer", (c) => c.notNull().defaultTo(0)).execute();
}
