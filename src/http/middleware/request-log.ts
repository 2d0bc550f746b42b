import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { routeTemplate } from "./route-template.js";

/**
 * One log line per request, once its response is sent: `request_id` (as in `X-Request-Id`),
 * `account_id` (when a key authenticated it), `method`, `route` (the route's template, e.g.
 * `/v1/calls/:call_id`, so ids and query strings, signatures included, never reach the line;
 * the path itself only when no route matched), `status` and `duration_ms`.
 */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const template = routeTemplate(req);
      logger.info(
        {
          request_id: req.requestId,
          account_id: req.auth?.account.id,
          method: req.method,
          route: template ?? null,
          path: template === undefined ? req.path : undefined,
          status: res.statusCode,
          duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        },
        "request",
      );
    });
    next();
  };
}
