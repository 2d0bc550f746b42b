import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * On PostgreSQL, a statement that inserts deliveries notifies the nodes when its transaction
 * commits (migration 022's function, the table's name as payload), so every node's delivery
 * worker looks for them then: woken in-process by the outbox, a worker on PostgreSQL could
 * look before the commit (its own connection sees nothing yet) and sleep past the event. SQLite
 * needs nothing: its one connection runs the worker's read after the transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`CREATE TRIGGER deliveries_notify_change AFTER INSERT ON deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION parley_notify_change()`.execute(db);
}
