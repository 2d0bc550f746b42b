import { ApiError } from "./api-error.js";

/**
 * Fixed-window counter per key (an account, or a client address before it has
 * authenticated), kept in memory: the windows restart with the process.
 */
export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetAt: number;
  allowed: boolean;
}

/** Most windows kept at once by default; past it the oldest window is forgotten. */
export const DEFAULT_MAX_RATE_KEYS = 100_000;

export class FixedWindowRateLimiter {
  /**
   * Insertion order is window-start order: a key whose window restarts is moved to the end.
   * With one window length for every key, the oldest windows expire first, so expired ones
   * are always at the front and are dropped from there, a few at a time on each hit.
   */
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = DEFAULT_MAX_RATE_KEYS,
  ) {}

  /** Windows held now (expired ones are dropped as later hits come). */
  get size(): number {
    return this.windows.size;
  }

  hit(key: string, limit: number): RateDecision {
    const now = this.now();
    this.dropExpired(now);
    let window = this.windows.get(key);
    if (!window) {
      // At the bound (an attacker rotating addresses), the oldest window goes: its key merely
      // starts counting afresh, and no request ever walks the whole map.
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
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

  private dropExpired(now: number): void {
    for (const [key, w] of this.windows) {
      if (now - w.start < this.windowMs) return;
      this.windows.delete(key);
    }
  }
}

/** The 429 for a refused decision, with `Retry-After`; `what` names what is counted ("requests"). */
export function rateLimitExceeded(d: RateDecision, what: string, now = Date.now()): ApiError {
  const retryAfter = Math.max(1, d.resetAt - Math.floor(now / 1000));
  return new ApiError(429, "rate_limit_exceeded", `Rate limit of ${d.limit} ${what} per minute exceeded; retry in ${retryAfter} s`, undefined, {
    "Retry-After": String(retryAfter),
  });
}
