import type { Request } from "express";

/**
 * The template of the route that answered `req` (`/v1/calls/:call_id`), or undefined when no
 * route did: what the request log and the HTTP metrics name a request by, so ids, query
 * strings and signatures never reach either and their label set stays bounded.
 */
export function routeTemplate(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === "string" ? req.baseUrl + path : undefined;
}
