import { sql } from "kysely";
import type { Db } from "./database.js";

/** The first wait before trying again when a reader holds the WAL; it doubles up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;

/** One try's outcome: `busy` when another connection (a backup, the admin CLI) still read the WAL. */
export interface WalTruncationResult {
  truncated: boolean;
  busy: boolean;
}

/**
 * Copies the WAL into the database file and empties it (`wal_checkpoint(TRUNCATE)`), so page
 * versions written before a removal (with the removed content) no longer sit in `-wal`.
 *
 * It never waits: busy_timeout is 0 for the checkpoint alone (on the connection held for it,
 * so no other statement runs meanwhile), and a reader in another process makes it answer
 * `busy` at once instead of holding the event loop for the 5 s busy_timeout. What it costs is
 * copying the WAL's pages and one fsync, while the connection is held: the WAL stays below
 * SQLite's auto-checkpoint size (1,000 pages) plus what one transaction wrote.
 */
export async function truncateWal(db: Db): Promise<WalTruncationResult> {
  return db.connection().execute(async (conn) => {
    const timeout = (await sql<{ timeout: number }>`PRAGMA busy_timeout`.execute(conn)).rows[0]?.timeout ?? 0;
    await sql.raw("PRAGMA busy_timeout = 0").execute(conn);
    try {
      const [row] = (await sql<{ busy: number; log: number; checkpointed: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(conn)).rows;
      // log -1: not in WAL mode (":memory:"), nothing to empty.
      const busy = row !== undefined && row.busy !== 0;
      return { truncated: !busy, busy };
    } finally {
      await sql.raw(`PRAGMA busy_timeout = ${Number(timeout)}`).execute(conn);
    }
  });
}

/**
 * Empties the WAL after removals, and keeps trying while a reader holds it: a later try (1 s,
 * then doubling up to a minute apart, on an unref'd timer) empties it once the reader is done.
 * One retry is pending at most; the next removal's own try may succeed first. Once the
 * database is closed a try fails, and no retry follows it.
 */
export class WalTruncation {
  private retry: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  /** Tries that found the WAL held since the last one that emptied it. */
  private busyTries = 0;

  constructor(
    private readonly db: Db,
    /** Told of each try that found the WAL held (`tries` counts them since the last success). */
    private readonly onBusy: (tries: number) => void = () => {},
  ) {}

  /** Tries now; true once the WAL is empty. Never throws: a failing or closed database schedules no retry. */
  async run(): Promise<boolean> {
    let result: WalTruncationResult;
    try {
      result = await truncateWal(this.db);
    } catch {
      this.clearRetry();
      return false;
    }
    if (result.truncated) {
      this.busyTries = 0;
      this.retryMs = FIRST_RETRY_MS;
      this.clearRetry();
      return true;
    }
    this.busyTries += 1;
    this.onBusy(this.busyTries);
    if (!this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        void this.run();
      }, this.retryMs);
      this.retry.unref();
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    }
    return false;
  }

  /** Whether a retry waits (the WAL was last found held). */
  get pending(): boolean {
    return this.retry !== undefined;
  }

  private clearRetry(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
  }
}
