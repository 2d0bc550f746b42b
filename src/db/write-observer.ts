import type SQLite from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/** Hears whether the database file can be written: the storage health (a full disk) follows it. */
export interface DatabaseWriteObserver {
  /** A write reached the file: an autocommitted statement that writes, or a COMMIT. */
  written(): void;
  /** A statement failed because the file cannot be written (see `isStorageError`). */
  failed(err: Error & { code: string }): void;
}

/**
 * SQLite's answers that mean the disk, not the query: full (SQLITE_FULL, also past
 * `max_page_count`), an I/O error (SQLITE_IOERR_*), a file that became read-only or cannot be
 * opened. Constraint violations and the like are the query's own and do not count.
 */
export function isStorageError(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code);
}

/** What a statement that did nothing answers. */
const NOTHING_DONE = { changes: 0, lastInsertRowid: 0 };

/**
 * Hands Kysely `database` with each statement's runs reported to `observer`. A statement is
 * wrapped once (kept while the statement cache keeps it); a run costs one more call.
 *
 * Also: a ROLLBACK when no transaction is open does nothing. SQLite rolls a transaction back by
 * itself when a write in it fails for want of disk (SQLITE_FULL, an I/O error); Kysely then
 * sends its own ROLLBACK, whose "cannot rollback - no transaction is active" would replace the
 * real error (a full disk would be logged and answered as an unknown error).
 */
export function observeWrites(database: SqliteDatabase, sqlite: SQLite.Database, observer: DatabaseWriteObserver): SqliteDatabase {
  const wrapped = new WeakMap<SqliteStatement, SqliteStatement>();
  const observe = (sql: string, statement: SqliteStatement): SqliteStatement => {
    if (/^\s*rollback\s*;?\s*$/i.test(sql)) {
      return { reader: false, all: () => [], iterate: () => [][Symbol.iterator](), run: (parameters) => (sqlite.inTransaction ? statement.run(parameters) : NOTHING_DONE) };
    }
    // Transaction control is "read-only" to SQLite: only a COMMIT's success proves the file took
    // the writes. A PRAGMA that sets something writes nothing to prove it.
    const writes = /^\s*commit\b/i.test(sql) || (!(statement as unknown as SQLite.Statement).readonly && !/^\s*pragma\b/i.test(sql));
    const settle = <T>(result: T): T => {
      if (writes && !sqlite.inTransaction) observer.written();
      return result;
    };
    const guard = <T>(run: () => T): T => {
      try {
        return settle(run());
      } catch (err) {
        if (isStorageError(err)) observer.failed(err);
        throw err;
      }
    };
    return {
      reader: statement.reader,
      all: (parameters) => guard(() => statement.all(parameters)),
      run: (parameters) => guard(() => statement.run(parameters)),
      iterate: (parameters) => guard(() => statement.iterate(parameters)),
    };
  };
  return {
    close: () => database.close(),
    prepare: (sql: string) => {
      const statement = database.prepare(sql);
      let observed = wrapped.get(statement);
      if (!observed) wrapped.set(statement, (observed = observe(sql, statement)));
      return observed;
    },
  };
}
