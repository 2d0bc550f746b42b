import { sql, type Kysely } from "kysely";
import { rewriteStoredRows } from "./stored-rows.js";

/**
 * Call results. Agents declare the fields their calls' analysis reads (`analysis_fields`).
 * Calls keep what their analysis is made from and what it came to: the agent's actions on
 * the call, why it ended, where it was transferred, why it failed, each agent turn's
 * latency, the outcome (a column, so calls can be listed by it) and whether the analysis is
 * still being written (a model is working on it; the call's end events wait for it).
 * Calls stored before kept at most an outcome in `analysis` (`do_not_call`): it moves to the
 * column (transferred calls get theirs), and their analysis is null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("analysis_fields", "text", (c) => c.notNull().defaultTo("[]")).execute();
  for (const column of ["outcome", "actions", "end_reason", "transfer_number", "failure_reason", "latency"]) {
    await db.schema.alterTable("calls").addColumn(column, "text").execute();
  }
  await db.schema.alterTable("calls").addColumn("analysis_pending", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await rewriteStoredRows(db, () => sql`UPDATE calls SET outcome = json_extract(analysis, '$.outcome') WHERE analysis IS NOT NULL AND json_valid(analysis)`.execute(db));
  await sql`UPDATE calls SET outcome = 'transferred' WHERE status = 'transferred' AND outcome IS NULL`.execute(db);
  // That outcome was all they held: not an analysis of the shape analyses have now.
  await sql`UPDATE calls SET analysis = NULL`.execute(db);
  await db.schema.createIndex("calls_account_outcome").on("calls").columns(["account_id", "outcome", "created_at"]).execute();
  await sql`CREATE INDEX calls_analysis_pending ON calls (analysis_pending) WHERE analysis_pending = 1`.execute(db);
}
