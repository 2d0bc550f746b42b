import type { Request } from "express";

declare module "express-serve-static-core" {
  interface Request {
    /** Set by the API's route table when one of its routes answers. */
    routeTemplate?: string;
  }
}

/**
 * The template of the route that answered `req` (`/v1/calls/:call_id`), or undefined when no
 * route did: what the request log and the HTTP metrics name a request by, so ids, query
 * strings and signatures never reach either and their label set stays bounded.
 */
export function routeTemplate(req: Request): string | undefined {
  if (req.routeTemplate !== undefined) return req.routeTemplate;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === "string" ? req.baseUrl + path : undefined;
}
