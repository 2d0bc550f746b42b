/**
 * Fixed-window request counter per key (an account, or a client address before it has
 * authenticated), kept in memory: the window restarts with the process.
 */
export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetAt: number;
  allowed: boolean;
}

export class FixedWindowRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  hit(key: string, limit: number): RateDecision {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    const allowed = window.count < limit;
    if (allowed) window.count += 1;
    return {
      limit,
      remaining: Math.max(0, limit - window.count),
      resetAt: Math.ceil((window.start + this.windowMs) / 1000),
      allowed,
    };
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(key);
  }
}
