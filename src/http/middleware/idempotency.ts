import { createHash } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { ApiError } from "../../core/api-error.js";
import { IDEMPOTENCY_TTL_MS, type IdempotencyKeysRepository, type IdempotencyScope } from "../../db/repositories/idempotency-keys.js";
import { openSecretFields, sealSecretFields, type StoredResponse } from "../idempotency-secrets.js";
import { bearerKey } from "./authenticate.js";
const MAX_KEY_LENGTH = 255;

/**
 * `Idempotency-Key` on POST: keys are scoped to account + method + path; the same key with
 * the same raw body replays the stored response, with another body it is 409
 * `idempotency_key_conflict`, and while the first request still runs 409
 * `idempotency_key_in_use`. Final 2xx and 4xx responses are stored for 24 hours; 429 and 5xx
 * are not, so the client can retry them.
 *
 * A route's `secretFields` (a new token, a signing secret) are stored only sealed under the
 * caller's API key (see idempotency-secrets.ts): the database alone cannot give them back, a
 * retry with the same API key gets the response byte for byte, and another key of the account
 * gets 409 `idempotency_key_conflict` rather than the secret.
 *
 * Returns the middleware for a route with those secret fields.
 */
export function idempotency(keys: IdempotencyKeysRepository, logger: Logger): (secretFields?: readonly string[]) => RequestHandler {
  return (secretFields = []) =>
    async (req: Request, res: Response, next: NextFunction) => {
      const key = req.header("Idempotency-Key");
      if (req.method !== "POST" || key === undefined || !req.auth) return next();
      try {
        if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
          throw new ApiError(400, "invalid_request", `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`, {
            fields: [{ field: "Idempotency-Key", message: "invalid header value" }],
          });
        }
        const scope: IdempotencyScope = { account_id: req.auth.account.id, method: req.method, path: scopedPath(req.path), idempotency_key: key };
        const sealScope = [scope.account_id, scope.method, scope.path, scope.idempotency_key];
        // The caller's API key as authenticate read it: only its hash is stored, so it can seal what the database must not reveal.
        const apiKey = bearerKey(req);
        const bodyHash = createHash("sha256").update(req.rawBody ?? Buffer.alloc(0)).digest("hex");
        const now = Date.now();

        let claimed = await keys.claim(scope, bodyHash, new Date(now).toISOString());
        if (!claimed) {
          const existing = await keys.find(scope);
          if (existing && now - Date.parse(existing.created_at) >= IDEMPOTENCY_TTL_MS) {
            await keys.release(scope);
            claimed = await keys.claim(scope, bodyHash, new Date(now).toISOString());
          }
          if (!claimed) {
            if (!existing) throw new ApiError(409, "idempotency_key_in_use", "A request with this Idempotency-Key is in progress; retry later");
            if (existing.body_hash !== bodyHash) {
              throw new ApiError(409, "idempotency_key_conflict", "This Idempotency-Key was used with a different request body");
            }
            if (existing.state !== "done" || existing.status_code === null) {
              throw new ApiError(409, "idempotency_key_in_use", "A request with this Idempotency-Key is in progress; retry later");
            }
            const body = existing.response_body ?? "";
            const replay = existing.sealed_secrets === null ? body : apiKey === undefined ? undefined : openSecretFields({ body, sealed: existing.sealed_secrets }, apiKey, sealScope);
            if (replay === undefined) {
              throw new ApiError(409, "idempotency_key_conflict", "This Idempotency-Key was used by another API key, and its response holds a secret only that key may see again");
            }
            res.setHeader("Idempotent-Replayed", "true");
            res.status(existing.status_code).type("application/json").send(replay);
            return;
          }
        }

        // Store the response before it is sent, so a retry arriving right after sees it.
        const send = res.json.bind(res);
        res.json = (body: unknown) => {
          const status = res.statusCode;
          const keep = status < 500 && status !== 429;
          let stored: StoredResponse | undefined;
          if (keep && secretFields.length === 0) stored = { body: JSON.stringify(body), sealed: null };
          // Without the caller's key the secrets could not be sealed: the response is not kept then.
          else if (keep && apiKey !== undefined) stored = sealSecretFields(body, secretFields, apiKey, sealScope);
          (stored ? keys.complete(scope, status, stored.body, stored.sealed) : keys.release(scope))
            .catch((err: unknown) => logger.error({ err, request_id: req.requestId, account_id: req.auth?.account.id }, "could not store idempotent response"))
            .finally(() => send(body));
          return res;
        };
        res.on("close", () => {
          if (!res.writableFinished) keys.release(scope).catch(() => undefined);
        });
        next();
      } catch (err) {
        next(err);
      }
    };
}

/** Paths longer than this are kept as their digest: an index entry has a size limit (2,704 bytes in PostgreSQL's). */
const MAX_STORED_PATH = 512;

/** The path as a key's scope stores it: itself, or `sha256:<hex>` of a long one (no route has one; a client may send one). */
function scopedPath(path: string): string {
  return path.length <= MAX_STORED_PATH ? path : `sha256:${createHash("sha256").update(path).digest("hex")}`;
}
