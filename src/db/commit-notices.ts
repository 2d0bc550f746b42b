import type { Db } from "./database.js";

/**
 * Subscribes a listener to commits that changed a table, made by any node (PostgreSQL's NOTIFY,
 * sent by the triggers of migrations 022 and 026 when the transaction commits). It is also
 * called when the notices resume after a lost connection, since changes may have been missed.
 */
export type CommitNotices = (table: string, listener: () => void) => void;

const notices = new WeakMap<Db, CommitNotices>();

/** Called by openPostgres for the database behind `db`. */
export function registerCommitNotices(db: Db, subscribe: CommitNotices): void {
  notices.set(db, subscribe);
}

/**
 * Calls `listener` after each commit that changed `table`, where the database sends such
 * notices; on SQLite never (a reader on its one connection runs after the transaction anyway).
 */
export function onCommittedChange(db: Db, table: string, listener: () => void): void {
  notices.get(db)?.(table, listener);
}
