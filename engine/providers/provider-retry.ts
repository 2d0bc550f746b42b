import { setTimeout as sleep } from "node:timers/promises";
import { isRetryable } from "./provider-error.js";

/** How a provider request is tried again after a retryable failure. */
export interface RetryPolicy {
  /** The wait before each retry, in order; as many retries as entries. */
  readonly delaysMs: readonly number[];
  /** A server asking for a longer wait (`Retry-After`) is not waited for: the caller would sit in silence. */
  readonly maxRetryAfterMs: number;
  /** Told of each retry as it is decided (the engine counts them for the control plane's metrics). */
  readonly onRetry?: (error: unknown) => void;
}

/** Two more tries, soon: a turn cannot wait long, and a provider down for longer is the call session's to handle. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ delaysMs: Object.freeze([250, 1000]), maxRetryAfterMs: 2000 });

/**
 * Yields the items of `attempt()`, starting it again (after the policy's wait) when it fails with
 * a retryable `ProviderError` before its first item. Once an item is out, the consumer has used
 * it (the caller heard the audio or the text is being spoken), so a later failure is thrown as
 * it is. Ends quietly, at once, when `signal` aborts during a wait.
 */
export async function* retryBeforeFirstItem<T>(attempt: () => AsyncIterable<T>, policy: RetryPolicy, signal: AbortSignal): AsyncGenerator<T> {
  for (let retry = 0; ; retry++) {
    let started = false;
    try {
      for await (const item of attempt()) {
        started = true;
        yield item;
      }
      return;
    } catch (error) {
      if (signal.aborted) return;
      const delayMs = started ? undefined : retryDelay(error, policy, retry);
      if (delayMs === undefined) throw error;
      policy.onRetry?.(error);
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        return;
      }
    }
  }
}

/**
 * Resolves with `attempt()`, started again (after the policy's wait) while it fails with a
 * retryable `ProviderError`: for one-shot requests such as opening a stream. Rejects with the
 * last error when retries run out, the error is not retryable, or `signal` aborts.
 */
export async function retryCall<T>(attempt: () => Promise<T>, policy: RetryPolicy, signal: AbortSignal): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      const delayMs = signal.aborted ? undefined : retryDelay(error, policy, retry);
      if (delayMs === undefined) throw error;
      policy.onRetry?.(error);
      await sleep(delayMs, undefined, { signal }).catch(() => {
        throw error;
      });
    }
  }
}

/** The wait before retry number `retry` (from 0) after `error`, or undefined when it is not worth trying again. */
function retryDelay(error: unknown, policy: RetryPolicy, retry: number): number | undefined {
  if (!isRetryable(error)) return undefined;
  const backoff = policy.delaysMs[retry];
  if (backoff === undefined) return undefined;
  if (error.retryAfterMs === null) return backoff;
  return error.retryAfterMs > policy.maxRetryAfterMs ? undefined : Math.max(backoff, error.retryAfterMs);
}

/** An HTTP `Retry-After` value (seconds, or a date) in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
