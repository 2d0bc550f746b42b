import type { Kysely } from "kysely";

/**
 * Credit held by calls under way, one row per call: the minutes it has started and not yet been
 * charged for (see CreditReservations). In the database rather than each node's memory, so the
 * calls of one account on every node sharing it together never spend more than its balance.
 * `node_id` is the node that made the hold (for reading; a lost node's calls are closed, which
 * releases their holds). No foreign key to `calls`: a call's hold is written in the transaction
 * that inserts the call or makes it ring.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("credit_holds")
    .addColumn("call_id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("minutes", "integer", (c) => c.notNull())
    .addColumn("node_id", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("credit_holds_account").on("credit_holds").column("account_id").execute();
}
