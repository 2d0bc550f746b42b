/**
 * Idempotency keys: every POST the client sends carries an `Idempotency-Key` header, so a POST
 * repeated after a lost answer or a retry is processed once. A key is a random UUID made per
 * logical call (the retries of that call reuse it, see retrying-fetch.ts); a caller that
 * repeats a call itself (after a crash, from a queue) passes its own key, through the
 * helpers' `{ idempotencyKey }` option or an `Idempotency-Key` header on `client.api`.
 *
 * The API keeps a key's answer for 24 hours, per account, method and path: the same key with
 * the same body replays the first answer (header `Idempotent-Replayed: true`); with another
 * body it is 409 `idempotency_key_conflict`.
 */
import type { Middleware } from "openapi-fetch";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** A new key: a random UUID (v4). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** openapi-fetch middleware: gives a POST without an `Idempotency-Key` a new one. */
export const idempotencyKeyMiddleware: Middleware = {
  onRequest({ request }) {
    if (request.method === "POST" && !request.headers.has(IDEMPOTENCY_HEADER)) {
      request.headers.set(IDEMPOTENCY_HEADER, newIdempotencyKey());
    }
    return request;
  },
};
