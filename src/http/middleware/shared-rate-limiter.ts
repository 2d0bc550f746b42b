import { sql } from "kysely";
import type { Db } from "../../db/database.js";
import type { RateDecision } from "../../core/fixed-window-rate-limiter.js";

/** How often each node deletes windows over: the table holds about one row per key active lately. */
const PRUNE_EVERY_MS = 60_000;
/** A node takes at most this share of what is left of a window at once... */
const LEASE_SHARE = 20;
/** ...and at most this many counts. */
const MAX_LEASE = 100;

/** Counts of one window this node took from the table and hands out itself: `next` to `last`. */
interface Lease {
  limit: number;
  start: number;
  next: number;
  last: number;
}

/**
 * Fixed-window counters kept in PostgreSQL, so the nodes sharing it count one account's
 * requests together: the same windows as FixedWindowRateLimiter's (a window starts at a key's
 * first request after the last one ended, and lasts `windowMs`).
 *
 * A node does not write the window's row for every request: it takes a lease of several
 * counts at once (a twentieth of what is left of the limit, at most 100, one when less than
 * 40 is left) in one statement, and hands them out to its next requests. So no count is given
 * twice and no more than the limit pass, across the nodes; what a node took and did not hand
 * out before the window ended is lost (at most a twentieth of what was left when it took it:
 * near the limit, one count). Refused requests are counted once a node finds the window full,
 * which it then remembers until the window ends or the key's limit changes.
 */
export class SharedRateLimiter {
  private prunedAt = 0;
  private readonly leases = new Map<string, Lease>();
  /** The statement taking a lease for a key, while it runs: the key's other requests wait for it. */
  private readonly taking = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async hit(key: string, limit: number): Promise<RateDecision> {
    for (;;) {
      const now = this.now();
      this.prune(now);
      const lease = this.leases.get(key);
      if (lease && lease.limit === limit && now < lease.start + this.windowMs) {
        if (lease.next <= lease.last) return this.decision(lease, lease.next++);
        if (lease.last >= limit) return this.decision(lease, limit + 1);
      }
      let taking = this.taking.get(key);
      if (!taking) {
        taking = this.takeLease(key, limit, now).finally(() => this.taking.delete(key));
        this.taking.set(key, taking);
      }
      await taking;
    }
  }

  private decision(lease: Lease, count: number): RateDecision {
    const { limit } = lease;
    return { limit, remaining: Math.max(0, limit - count), resetAt: Math.ceil((lease.start + this.windowMs) / 1000), allowed: count <= limit };
  }

  /** Starts or continues the key's window with a lease of counts; one past the limit when it is full. */
  private async takeLease(key: string, limit: number, now: number): Promise<void> {
    const expired = now - this.windowMs;
    const first = Math.max(1, Math.min(MAX_LEASE, Math.floor(limit / LEASE_SHARE)));
    // Every expression of SET reads the row as it was, so `leased` is what `count` gained.
    const { rows } = await sql<{ window_start: number; count: number; leased: number }>`
      INSERT INTO rate_windows AS w (key, window_start, count, leased) VALUES (${key}, ${now}, ${first}, ${first})
      ON CONFLICT (key) DO UPDATE SET
        window_start = CASE WHEN w.window_start <= ${expired} THEN ${now} ELSE w.window_start END,
        leased = CASE WHEN w.window_start <= ${expired} THEN ${first}
          ELSE GREATEST(1, LEAST(${MAX_LEASE}, (${limit}::bigint - w.count) / ${LEASE_SHARE})) END,
        count = CASE WHEN w.window_start <= ${expired} THEN ${first}
          ELSE w.count + GREATEST(1, LEAST(${MAX_LEASE}, (${limit}::bigint - w.count) / ${LEASE_SHARE})) END
      RETURNING window_start, count, leased`.execute(this.db);
    const { window_start: start, count, leased } = rows[0]!;
    this.leases.set(key, { limit, start: Number(start), next: count - leased + 1, last: count });
  }

  /** Now and then (from a request, not a timer: nothing to stop when the app goes), windows over are dropped. */
  private prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    for (const [key, lease] of this.leases) if (now >= lease.start + this.windowMs) this.leases.delete(key);
    void this.db.deleteFrom("rate_windows").where("window_start", "<=", now - this.windowMs).execute().catch(() => {});
  }
}
