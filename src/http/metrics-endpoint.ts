import { createHash, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { unmapIpv4 } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import type { ParleyMetrics } from "../observability/metrics.js";

/**
 * `GET /metrics`: the Prometheus exposition. With PARLEY_METRICS_TOKEN set, only a request
 * bearing it (`Authorization: Bearer <token>`, compared in constant time) gets it, from any
 * address; without, only requests from a loopback address (a Prometheus on the same host, or
 * a tunnel to it). No API key, no per-account rate limit: a scraper is no account.
 */
export function metricsEndpoint(metrics: ParleyMetrics, token: string) {
  const expected = token ? digest(token) : undefined;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (expected) {
        const given = /^Bearer\s+(.+)$/i.exec(req.get("authorization") ?? "")?.[1]?.trim();
        if (!given) throw tokenRefused("Missing metrics token: send it as 'Authorization: Bearer <PARLEY_METRICS_TOKEN>'");
        if (!timingSafeEqual(digest(given), expected)) throw tokenRefused("Invalid metrics token");
      } else if (!isLoopback(req.socket.remoteAddress)) {
        throw new ApiError(403, "forbidden", "Metrics are served to loopback addresses only; set PARLEY_METRICS_TOKEN to scrape from elsewhere with a bearer token");
      }
      const { contentType, body } = await metrics.expose();
      res.status(200).setHeader("Content-Type", contentType).setHeader("Cache-Control", "no-store").send(body);
    } catch (err) {
      next(err);
    }
  };
}

function tokenRefused(message: string): ApiError {
  return new ApiError(401, "invalid_metrics_token", message, undefined, { "WWW-Authenticate": 'Bearer realm="metrics"' });
}

/** Fixed-length digests, so the comparison takes the same time whatever the given token's length. */
function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** A loopback client: 127.0.0.0/8 (also IPv4-mapped) or ::1. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = unmapIpv4(address);
  return plain === "::1" || plain.startsWith("127.");
}
