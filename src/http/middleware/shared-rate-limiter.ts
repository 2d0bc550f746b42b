import { sql } from "kysely";
import type { Db } from "../../db/database.js";
import type { RateDecision } from "./rate-limiter.js";

/** How often each node deletes windows over: the table holds about one row per key active lately. */
const PRUNE_EVERY_MS = 60_000;

/**
 * Fixed-window counters kept in PostgreSQL, so the nodes sharing it count one account's
 * requests together: the same windows as FixedWindowRateLimiter's (a window starts at a key's
 * first request after the last one ended, and lasts `windowMs`), counted by one statement per
 * request that starts or continues the window and returns the count, so concurrent requests on
 * any node each get their own count. Refused requests are counted too: they change no decision
 * (the count is past the limit either way).
 */
export class SharedRateLimiter {
  private prunedAt = 0;

  constructor(
    private readonly db: Db,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async hit(key: string, limit: number): Promise<RateDecision> {
    const now = this.now();
    // Pruned from a request now and then, not on a timer: nothing to stop when the app goes.
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now;
      void this.db.deleteFrom("rate_windows").where("window_start", "<=", now - this.windowMs).execute().catch(() => {});
    }
    const expired = now - this.windowMs;
    const { rows } = await sql<{ window_start: number; count: number }>`
      INSERT INTO rate_windows AS w (key, window_start, count) VALUES (${key}, ${now}, 1)
      ON CONFLICT (key) DO UPDATE SET
        window_start = CASE WHEN w.window_start <= ${expired} THEN ${now} ELSE w.window_start END,
        count = CASE WHEN w.window_start <= ${expired} THEN 1 ELSE w.count + 1 END
      RETURNING window_start, count`.execute(this.db);
    const { window_start: start, count } = rows[0]!;
    return { limit, remaining: Math.max(0, limit - count), resetAt: Math.ceil((Number(start) + this.windowMs) / 1000), allowed: count <= limit };
  }
}
