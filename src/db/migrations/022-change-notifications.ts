import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";
import { CHANGES_CHANNEL } from "../postgres-changes.js";

/**
 * On PostgreSQL, every statement that changes accounts or api_keys notifies the nodes
 * (NOTIFY on CHANGES_CHANNEL, the table's name as payload, sent when its transaction commits),
 * so each node may keep key lookups between requests and drop them when one changes (see
 * PostgresChanges). SQLite needs nothing: its own change counter serves (database-generation.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`CREATE FUNCTION parley_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(${sql.lit(CHANGES_CHANNEL)}, TG_TABLE_NAME);
      RETURN NULL;
    END $$`.execute(db);
  for (const table of ["accounts", "api_keys"]) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_notify_change`)} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.id(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION parley_notify_change()`.execute(db);
  }
}
