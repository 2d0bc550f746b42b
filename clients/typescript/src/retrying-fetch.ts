/**
 * The client's transport: `fetch` plus retries of the answers that ask to be retried.
 *
 * - 429 (`rate_limit_exceeded`): retried after `Retry-After` seconds (the API always sends
 *   it; without one, after 1 s, 2 s, 4 s...).
 * - 503 with `Retry-After`: retried after it. A 503 without one is returned as it is.
 * - Anything else (2xx, 3xx, every other 4xx, 500) is returned at once, never retried.
 * - At most `maxRetries` retries; a `Retry-After` longer than `maxRetryAfterSeconds` is not
 *   waited for: the 429 or 503 is returned, and the helper throws it as a `ParleyApiError`
 *   whose `retryAfter` says when to come back.
 *
 * Each attempt sends a copy of the same request, so a POST keeps its `Idempotency-Key`
 * across retries and the API processes it once. The request's `AbortSignal` cuts a wait short.
 * Network errors (no answer at all) are thrown as `fetch` throws them, not retried.
 */
import { retryAfterSeconds } from "./parley-api-error.js";

export type FetchFunction = (request: Request) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (0 turns retrying off). */
  maxRetries: number;
  /** The longest `Retry-After` waited for, in seconds. */
  maxRetryAfterSeconds: number;
}

/** How long to wait before retrying `response`, in ms; null when it must not be retried. */
export function retryDelayMs(response: Response, retry: number): number | null {
  const after = retryAfterSeconds(response.headers.get("retry-after"));
  if (response.status === 429) return (after ?? 2 ** retry) * 1000;
  if (response.status === 503 && after !== null) return after * 1000;
  return null;
}

export function retryingFetch(base: FetchFunction, policy: RetryPolicy): FetchFunction {
  return async (request) => {
    for (let retry = 0; ; retry++) {
      const response = await base(request.clone());
      const delay = retryDelayMs(response, retry);
      if (delay === null || retry >= policy.maxRetries || delay > policy.maxRetryAfterSeconds * 1000) return response;
      // The refused answer is dropped: free its connection before waiting.
      await response.body?.cancel().catch(() => undefined);
      await wait(delay, request.signal);
    }
  };
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
