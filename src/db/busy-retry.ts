import SQLite from "better-sqlite3";

/** How long start-up statements are retried while another process holds the database. */
export const BUSY_RETRY_MS = 5_000;
const RETRY_PAUSE_MS = 20;

/**
 * Runs `statement`, again and again while SQLite answers SQLITE_BUSY, for `withinMs` at most.
 * For the statements run when a database is opened: SQLite answers some of them (switching a
 * new file to WAL while another process does the same) with SQLITE_BUSY at once, without
 * waiting out busy_timeout. Blocks the thread between tries: it runs before anything else.
 */
export function retryWhileBusy<T>(statement: () => T, withinMs = BUSY_RETRY_MS): T {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return statement();
    } catch (err) {
      if (!(err instanceof SQLite.SqliteError && err.code.startsWith("SQLITE_BUSY")) || Date.now() >= deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_PAUSE_MS);
    }
  }
}
