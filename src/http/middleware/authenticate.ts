import type { NextFunction, Request, Response } from "express";
import { ApiError } from "../../core/api-error.js";
import type { AccountsService } from "../../services/accounts.js";
import type { ApiKeysService } from "../../services/api-keys.js";
import type { AuthContext } from "../auth-context.js";
import { clientAddressKey } from "../../core/client-address-key.js";
import { rateLimitExceeded, type FixedWindowRateLimiter, type RateDecision } from "../../core/fixed-window-rate-limiter.js";

declare module "express-serve-static-core" {
  interface Request {
    auth?: AuthContext;
  }
}

function setRateHeaders(res: Response, d: RateDecision): void {
  res.setHeader("X-RateLimit-Limit", String(d.limit));
  res.setHeader("X-RateLimit-Remaining", String(d.remaining));
  res.setHeader("X-RateLimit-Reset", String(d.resetAt));
}

/** The key an `Authorization: Bearer <key>` header holds; undefined when there is none or it is malformed. */
export function bearerKey(req: Request): string | undefined {
  return req.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}

/**
 * Resolves the bearer key and applies the account's rate limit (headers on every response).
 * Requests without a valid key count against their client address (an IPv6 client by its
 * /64), at the lowest plan's rate, so key guessing is throttled too.
 */
export function authenticate(deps: {
  apiKeys: ApiKeysService;
  accounts: AccountsService;
  /** Counts requests without a valid key, by client address: each node its own. */
  limiter: FixedWindowRateLimiter;
  /** Counts each account's requests: the process's own windows, or the nodes' shared ones (SharedRateLimiter). */
  accountLimiter: { hit(key: string, limit: number): RateDecision | Promise<RateDecision> };
  anonymousLimit: number;
}) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const presented = bearerKey(req);
    try {
      if (req.headers.authorization !== undefined && presented === undefined) {
        throw new ApiError(401, "invalid_api_key", "Malformed Authorization header: expected 'Bearer <key>'");
      }
      const { key, account } = await deps.apiKeys.authenticate(presented);
      const hit = deps.accountLimiter.hit(`account:${account.id}`, deps.accounts.limitsOf(account).requestsPerMinute);
      // Awaited only when shared: the process's own windows answer at once, without a turn of the event loop.
      const decision = hit instanceof Promise ? await hit : hit;
      setRateHeaders(res, decision);
      if (!decision.allowed) throw rateLimitExceeded(decision, "requests");
      req.auth = { account, keyId: key.id, permissions: key.permissions };
      next();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        const decision = deps.limiter.hit(`ip:${clientAddressKey(req.socket.remoteAddress)}`, deps.anonymousLimit);
        setRateHeaders(res, decision);
        if (!decision.allowed) return next(rateLimitExceeded(decision, "requests"));
      }
      next(err);
    }
  };
}
