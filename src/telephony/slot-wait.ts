import { abortableSleep } from "../core/abortable-sleep.js";
import { isRetryLater } from "../core/api-error.js";

/** How waitForSlot retries: every `retryMs`, for `waitMs` at most, unless `signal` aborts. */
export interface SlotWait {
  waitMs: number;
  retryMs: number;
  signal: AbortSignal;
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
      if (!isRetryLater(err) || Date.now() >= until || signal.aborted) throw err;
      await abortableSleep(Math.min(retryMs, until - Date.now()), signal);
    }
  }
}
