import { ApiError } from "../core/api-error.js";

/** How waitForSlot retries: every `retryMs`, for `waitMs` at most, unless `signal` aborts. */
export interface SlotWait {
  waitMs: number;
  retryMs: number;
  signal: AbortSignal;
}

/** A refusal that passes once calls end: the engine full (503) or the account at its share or limit (429). */
function isBusy(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 429 || err.status === 503);
}

/**
 * Asks `admit` for a call slot until it gives one. A busy refusal is retried every `retryMs`
 * for up to `waitMs`; after that, or once `signal` aborts, the last refusal is thrown. Any
 * other refusal is thrown at once.
 */
export async function waitForSlot<T>(admit: () => Promise<T>, { waitMs, retryMs, signal }: SlotWait): Promise<T> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await admit();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= until || signal.aborted) throw err;
      await pause(Math.min(retryMs, until - Date.now()), signal);
    }
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener("abort", done, { once: true });
  });
}
