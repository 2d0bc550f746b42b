/**
 * Per-call options every resource helper takes as its last argument, and their translation to
 * openapi-fetch's request options.
 */
import { IDEMPOTENCY_HEADER } from "./idempotency-key.js";

export interface RequestOptions {
  /**
   * The `Idempotency-Key` of a POST (ignored on other methods). Default: a new random UUID for
   * this call, reused by its retries. Pass your own to make a repeated call (after a crash,
   * from a job queue) count once.
   */
  idempotencyKey?: string;
  /** Cancels the request, and any wait before a retry. */
  signal?: AbortSignal;
  /** Extra headers for this request. */
  headers?: Record<string, string>;
}

/** The openapi-fetch options for `options` (only what is set). */
export function fetchOptions(options: RequestOptions | undefined): { headers?: Record<string, string>; signal?: AbortSignal } {
  if (!options) return {};
  const headers = { ...options.headers, ...(options.idempotencyKey !== undefined ? { [IDEMPOTENCY_HEADER]: options.idempotencyKey } : {}) };
  return { ...(Object.keys(headers).length > 0 ? { headers } : {}), ...(options.signal ? { signal: options.signal } : {}) };
}

/** A list's filters as query parameters, with `cursor` when following one. */
export function listQuery<F extends object>(filters: F | undefined, cursor: string | undefined): F & { cursor?: string } {
  return { ...(filters ?? ({} as F)), ...(cursor !== undefined ? { cursor } : {}) };
}
