import type { Kysely } from "kysely";

/**
 * Agent test runs (issue 32): scenarios a simulated caller plays against an agent, with what
 * each was expected to bring about. A run is one row: the scenarios as asked (`scenarios`, JSON)
 * and what each came to (`results`, JSON, written as each scenario ends), so a run read while
 * it goes shows the scenarios done so far. `node_id` is the process carrying the run: a run
 * left `running` by a process that stopped is ended `error` by the next start.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("test_runs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("agent_id", "text", (c) => c.notNull().references("agents.id"))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("scenarios", "text", (c) => c.notNull())
    .addColumn("results", "text", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("node_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("completed_at", "text")
    .execute();
  await db.schema.createIndex("test_runs_list").on("test_runs").columns(["agent_id", "created_at", "id"]).execute();
  await db.schema.createIndex("test_runs_status").on("test_runs").columns(["account_id", "status"]).execute();
}
