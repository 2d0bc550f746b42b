import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type express from "express";
import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { noRoute } from "./middleware/error-handler.js";
import { decodes } from "./middleware/path-encoding.js";
import type { RouteTable } from "./route-table.js";
import { runHandlers } from "./middleware/run-handlers.js";

/** An API route as the route table holds it. */
export interface ApiRoute {
  template: string;
  handlers: RequestHandler[];
}

/**
 * The HTTP server's request listener. A request the route table answers (one of the API's
 * paths, with one of its methods) runs `common`, then its route's handlers, with Express's
 * request and response as `app.handle` makes them, errors going to `onError`. Every other
 * request (health, metrics, OpenAPI, the console, recordings, a 404 or 405, a path that does
 * not decode) goes to `app`, which runs the same `common` first and answers as before.
 *
 * Why: Express's router walks its layers and builds its closures for every request, about 8%
 * of a list request's CPU (bench:api), for API requests whose route the table finds anyway.
 */
export function apiFirst(app: express.Express, table: RouteTable<ApiRoute>, common: readonly RequestHandler[], onError: ErrorRequestHandler): RequestListener {
  const chains = new Map<ApiRoute, RequestHandler[]>();
  const chainOf = (route: ApiRoute): RequestHandler[] => {
    let chain = chains.get(route);
    if (!chain) chains.set(route, (chain = [...common, ...route.handlers]));
    return chain;
  };
  return (message: IncomingMessage, response: ServerResponse) => {
    // Express's prototypes first: req.path is Express's own reading of the URL. A server built
    // with expressMessageClasses made them so already, and then this changes nothing.
    const req = Object.setPrototypeOf(message, app.request) as Request;
    const res = Object.setPrototypeOf(response, app.response) as Response;
    const path = req.path;
    const lookup = decodes(path) ? table.lookup(req.method, path) : undefined;
    if (lookup === undefined || !("found" in lookup)) return app(req, res);
    req.res = res;
    res.req = req;
    res.locals ??= Object.create(null) as Record<string, unknown>;
    req.baseUrl = "";
    req.originalUrl = req.url;
    req.params = lookup.found.params;
    req.routeTemplate = lookup.found.route.template;
    runHandlers(chainOf(lookup.found.route), req, res, (err?: unknown) => {
      // Every route answers; one that went on anyway is a path with nothing more to give, as in Express.
      onError(err ?? noRoute(req), req, res, () => undefined);
    });
  };
}
