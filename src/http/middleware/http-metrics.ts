import { performance } from "node:perf_hooks";
import type { NextFunction, Request, Response } from "express";
import { UNMATCHED_ROUTE, type ParleyMetrics } from "../../observability/metrics.js";
import { routeTemplate } from "./route-template.js";

/**
 * Times every request into `parley_http_request_duration_seconds`, labelled by the route
 * template that answered it (`/v1/agents/:agent_id`, never the raw URL: the label set stays
 * bounded whatever clients send), `unmatched` when none did, and the status. A request served
 * by a mounted handler (the console's files) counts under its mount path with `/*`. Per request:
 * one timestamp, one listener and one histogram observation.
 */
export function httpMetrics(metrics: ParleyMetrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    res.once("finish", () => {
      const route = routeTemplate(req) ?? (req.baseUrl ? `${req.baseUrl}/*` : UNMATCHED_ROUTE);
      metrics.observeHttp(req.method, route, res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
}
