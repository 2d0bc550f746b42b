import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { ApiError } from "../../core/api-error.js";
import { isStorageError } from "../../db/write-observer.js";

/** Renders every error in the envelope; unexpected ones become a 500 without internals. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let apiError: ApiError;
    if (err instanceof ApiError) {
      apiError = err;
    } else if (isStorageError(err)) {
      // The disk, not the request (already logged and counted by the storage health): the client may try again later.
      logger.warn({ requestId: req.requestId, method: req.method, path: req.path, code: err.code }, "request failed: the database cannot be written");
      apiError = new ApiError(503, "storage_unavailable", "The service cannot store data now (its disk is full or failing); try again later", undefined, { "Retry-After": "30" });
    } else {
      logger.error({ err, request_id: req.requestId, account_id: req.auth?.account.id, method: req.method, path: req.path }, "unhandled error");
      apiError = new ApiError(500, "internal_error", "Internal error; the request id identifies it in the service's logs");
    }
    if (res.headersSent) return res.end();
    for (const [k, v] of Object.entries(apiError.headers ?? {})) res.setHeader(k, v);
    res.status(apiError.status).json({
      error: { code: apiError.code, message: apiError.message, ...(apiError.details ? { details: apiError.details } : {}) },
      meta: { request_id: req.requestId },
    });
  };
}

/** The error for a request no route answers. */
export function noRoute(req: Request): ApiError {
  return new ApiError(404, "not_found", `No route ${req.method} ${req.path}`);
}

export function notFound() {
  return (req: Request, _res: Response, next: NextFunction) => {
    next(noRoute(req));
  };
}
