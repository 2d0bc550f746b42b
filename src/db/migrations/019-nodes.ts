import { sql, type Kysely } from "kysely";

/**
 * Nodes and the calls they run. Every Parley process sharing the database is a node with an id
 * (PARLEY_NODE_ID, or one kept in its data directory) and a heartbeat (`heartbeat_at`, ms since
 * the epoch). A live call records the node running its media (`node_id`): when that node stops
 * beating, another closes the call (see NodePresence), and live controls such as
 * `POST /v1/calls/{id}/end` reach it through `call_commands`, which each node reads for itself
 * and deletes once acted on.
 * Calls live before this version have no node: the first node to start closes them, as the
 * start-up recovery of one node always did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("nodes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("heartbeat_at", "integer", (c) => c.notNull())
    .addColumn("stopped_at", "text")
    .execute();
  await db.schema.alterTable("calls").addColumn("node_id", "text").execute();
  // The sweep for a lost node's calls reads only live calls.
  await sql`CREATE INDEX calls_live_node ON calls (node_id) WHERE status IN ('ringing', 'in_progress')`.execute(db);
  await db.schema
    .createTable("call_commands")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("node_id", "text", (c) => c.notNull())
    .addColumn("call_id", "text", (c) => c.notNull())
    .addColumn("command", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("call_commands_node").on("call_commands").columns(["node_id", "created_at"]).execute();
}
