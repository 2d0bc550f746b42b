import type { RequestListener } from "node:http";
import { pipeline } from "node:stream/promises";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { Logger } from "pino";
import { sql } from "kysely";
import { ApiError } from "../core/api-error.js";
import { JsonText } from "../core/json-text.js";
import { IdempotencyKeysRepository } from "../db/repositories/idempotency-keys.js";
import { PLANS } from "../config.js";
import type { Services } from "../services/container.js";
import { grants } from "../services/permissions.js";
import { storageProblem } from "../services/storage-health.js";
import { authenticate } from "./middleware/authenticate.js";
import { errorHandler, notFound } from "./middleware/error-handler.js";
import { httpMetrics } from "./middleware/http-metrics.js";
import { metricsEndpoint } from "./metrics-endpoint.js";
import { idempotency } from "./middleware/idempotency.js";
import { jsonBody } from "./middleware/json-body.js";
import { rawBody } from "./middleware/raw-body.js";
import { pathEncoding } from "./middleware/path-encoding.js";
import { FixedWindowRateLimiter } from "../core/fixed-window-rate-limiter.js";
import { requestId } from "./middleware/request-id.js";
import { requestLog } from "./middleware/request-log.js";
import { consoleHandler } from "./console.js";
import { buildOpenApiDocument } from "./openapi.js";
import type { RouteSpec } from "./route.js";
import { allRoutes } from "./routes/index.js";
import { parsePart } from "./validation.js";
import { RouteTable } from "./route-table.js";
import { inOrder } from "./middleware/run-handlers.js";
import { apiFirst, type ApiRoute } from "./api-first.js";
import { expressMessageClasses, type MessageClasses } from "./express-messages.js";
import { SharedRateLimiter } from "./middleware/shared-rate-limiter.js";
import { isPostgres } from "../db/dialect.js";

export interface AppDeps {
  services: Services;
  logger: Logger;
  /** Extra readiness checks (the engine adds its own); each throws when not ready. */
  readinessChecks?: Array<() => Promise<void>>;
  /** The box's call slots (PARLEY_CALL_CAPACITY) and those held now, shown by /readyz; absent without the engine. */
  callSlots?: () => { capacity: number; inUse: number };
  limiter?: FixedWindowRateLimiter;
  /** The webhooks of the carriers set up (`/carriers/...`, each signed by its carrier). */
  carrierWebhooks?: express.Router[];
}

function requirePermission(permission: string | null): RequestHandler {
  return (req, _res, next) => {
    if (permission !== null && !grants(req.auth?.permissions ?? [], permission)) {
      return next(new ApiError(403, "forbidden", `This API key lacks the '${permission}' permission`));
    }
    next();
  };
}

function handle(spec: RouteSpec): RequestHandler {
  return async (req: Request, res: Response) => {
    const params = spec.params ? parsePart(spec.params, "params", req.params) : {};
    const query = spec.query ? parsePart(spec.query, "query", { ...req.query }) : {};
    if (!spec.query && Object.keys(req.query).length > 0) {
      const fields = Object.keys(req.query).map((field) => ({ field, message: "unknown query parameter" }));
      throw new ApiError(400, "invalid_request", `${fields[0]!.field} (query parameter): unknown query parameter`, { fields });
    }
    // A file body (rawBody) reaches the handler as the Buffer read; a JSON one through its schema.
    const body = spec.rawBody ? req.body : spec.body ? parsePart(spec.body, "body", req.body ?? {}) : {};
    if (!spec.body && !spec.rawBody && req.body !== undefined && !(typeof req.body === "object" && req.body !== null && Object.keys(req.body).length === 0)) {
      throw ApiError.field("invalid_request", "(body)", "this operation takes no request body");
    }
    const result = await spec.handler({ auth: req.auth!, params, query, body, req, res } as Parameters<RouteSpec["handler"]>[0]);
    if (spec.produces) {
      res.status(spec.status).type(`${spec.produces}; charset=utf-8`);
      if (spec.fileName) res.setHeader("Content-Disposition", `attachment; filename="${spec.fileName(params as Record<string, string>)}"`);
      res.send(result as string);
      return;
    }
    // A handler may answer with another success status than the usual one (an idempotent create that created nothing: 200).
    res.status(typeof res.locals.status === "number" ? res.locals.status : spec.status);
    if (result instanceof JsonText) sendJsonText(res, result);
    // A read's object, sent as res.json would send it; writes go through res.json, which the Idempotency-Key store hooks.
    else if (req.method === "GET" || req.method === "HEAD") sendJsonText(res, new JsonText(JSON.stringify(result)));
    else res.json(result);
  };
}

/**
 * Sends text that is JSON already, as res.json would send it once serialised, without
 * res.send's work for bodies of any kind (parsing its Content-Type, copying the body into a
 * Buffer to measure it). Only for reads: the Idempotency-Key replay store hooks res.json.
 */
function sendJsonText(res: Response, body: JsonText): void {
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body.text));
  res.end(body.text);
}

/**
 * A path the API has, asked with a method it does not take: 405 with Allow. OPTIONS is
 * answered with the methods (HEAD with GET), as Express's router did.
 */
function notAllowed(req: Request, res: Response, next: NextFunction, methods: readonly string[]): void {
  if (req.method === "OPTIONS") {
    const withHead = [...new Set(methods.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])))].sort().join(", ");
    res.setHeader("Allow", withHead);
    res.type("text/plain").send(withHead);
    return;
  }
  const allow = methods.join(", ");
  res.setHeader("Allow", allow);
  next(new ApiError(405, "method_not_allowed", `${req.method} is not allowed on ${req.path}; allowed: ${allow}`));
}

/** What Node's HTTP server needs to serve the app: its listener, and the classes to build messages with. */
export interface HttpApp {
  listener: RequestListener;
  messages: MessageClasses;
}

/**
 * Builds the HTTP server's request listener (no listening): health, OpenAPI, every /v1 route,
 * errors in the envelope. The API's routes are run without Express's router (see apiFirst);
 * requests and responses are born with Express's prototypes (see expressMessageClasses).
 */
export function createApp(deps: AppDeps): HttpApp {
  const { services, logger } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  app.set("etag", false);
  // What every request goes through, as one layer (each layer of Express's router costs its own walk).
  const common = [httpMetrics(services.metrics), requestId(), requestLog(logger)];
  app.use(inOrder([...common, pathEncoding()]));

  // The API's routes, found by a RouteTable rather than Express's router, which tried each of
  // the ~50 routes in turn on every request. apiFirst runs the requests it finds; what comes to
  // Express's layer below is a known path with another method (405 with Allow) or no API path.
  const routes = allRoutes(services);
  const limiter = deps.limiter ?? new FixedWindowRateLimiter();
  const anonymousLimit = Math.min(...PLANS.map((p) => services.config.plans[p].requestsPerMinute));
  // Several nodes share PostgreSQL: an account's requests are counted across them there.
  const accountLimiter = isPostgres(services.db) ? new SharedRateLimiter(services.db) : limiter;
  const auth = authenticate({ apiKeys: services.apiKeys, accounts: services.accounts, limiter, accountLimiter, anonymousLimit });
  const idem = idempotency(new IdempotencyKeysRepository(services.db), logger);
  const body = jsonBody(services.config.bodyLimitBytes);
  const table = new RouteTable<ApiRoute>(
    routes.map((spec) => ({
      method: spec.method,
      path: spec.path,
      route: { template: spec.path, handlers: [auth, requirePermission(spec.permission), spec.rawBody ? rawBody(spec.rawBody) : body, ...(spec.secretInResponse ? [] : [idem(spec.secretFields)]), handle(spec)] },
    })),
  );
  app.use((req: Request, res: Response, next: NextFunction) => {
    const lookup = table.lookup(req.method, req.path);
    if (lookup !== undefined && "allowed" in lookup) return notAllowed(req, res, next, lookup.allowed);
    next();
  });

  app.get("/metrics", metricsEndpoint(services.metrics, services.config.metrics.token));
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    try {
      await sql`SELECT 1`.execute(services.db);
      for (const check of deps.readinessChecks ?? []) await check();
      const failing = services.storageHealth.failing();
      if (failing.length > 0) {
        res.status(503).json({ status: "not_ready", reason: storageProblem(failing, services.config.dataDir), storage: failing });
        return;
      }
      // A full box is still ready (its API works): a balancer spreading calls reads `calls.available`.
      const slots = deps.callSlots?.();
      res.json({ status: "ready", ...(slots && { calls: { capacity: slots.capacity, in_use: slots.inUse, available: Math.max(0, slots.capacity - slots.inUse) } }) });
    } catch (err) {
      res.status(503).json({ status: "not_ready", reason: (err as Error).message });
    }
  });

  for (const webhooks of deps.carrierWebhooks ?? []) app.use("/carriers", webhooks);

  app.use("/console", consoleHandler()); // the web console: static files, no API key (the page signs in with one)

  const openapi = buildOpenApiDocument(routes, services.config);
  app.get("/v1/openapi.json", (_req, res) => {
    res.json(openapi);
  });

  // Recording links carry their own signature (see RecordingLinks): no API key, so webhook
  // receivers can fetch them. Outside the route specs because the answer is a WAV file.
  app.get("/v1/calls/:call_id/recording", async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    // From the recording store: a file of the data directory, or streamed from the bucket (see RecordingStore).
    const recording = await services.recordingLinks.resolve(req.params.call_id!, query.expires, query.signature);
    res.status(200).type("audio/wav").setHeader("Cache-Control", "private, max-age=300");
    if ("file" in recording) {
      // sendFile answers range requests (206) and conditional ones, so a player can seek.
      await new Promise<void>((resolve, reject) => res.sendFile(recording.file, { dotfiles: "allow" }, (err) => (err ? reject(err) : resolve())));
      return;
    }
    res.setHeader("Content-Length", String(recording.size));
    // A client that goes away, or a store that fails mid-way, ends the response there (pipeline
    // destroys both sides); the headers are sent, so no error answer can follow.
    await pipeline(recording.body, res).catch((err: unknown) => logger.debug({ err, call_id: req.params.call_id }, "recording not sent to the end"));
  });

  app.use(notFound());
  const onError = errorHandler(logger);
  app.use(onError);
  return { listener: apiFirst(app, table, common, onError), messages: expressMessageClasses(app) };
}
