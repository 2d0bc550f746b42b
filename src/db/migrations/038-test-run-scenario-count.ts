import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * A test run's number of scenarios as a column, and an index on the account's runs by time: the
 * daily scenario allowance (checked under the account's lock on every new run) is one SUM over
 * the last 24 hours instead of reading and parsing every run's scenarios. Existing runs are
 * counted from their stored JSON.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("test_runs").addColumn("scenario_count", "integer", (c) => c.notNull().defaultTo(0)).execute();
  const length = isPostgres(db) ? sql`json_array_length(scenarios::json)` : sql`json_array_length(scenarios)`;
  await sql`UPDATE test_runs SET scenario_count = ${length}`.execute(db);
  await db.schema.createIndex("test_runs_account_created").on("test_runs").columns(["account_id", "created_at"]).execute();
}
