import express, { type NextFunction, type Request, type Response } from "express";
import { ApiError } from "../../core/api-error.js";
import { payloadTooLarge } from "./json-body.js";

/** What a route that takes its body as bytes accepts (RouteSpec.rawBody). */
export interface RawBodySpec {
  /** Media types accepted, lower case, without parameters. */
  types: readonly string[];
  /** Largest body, in bytes. */
  limitBytes: number;
  /** What the body is, for the OpenAPI document. */
  description: string;
}

/** The media type of a Content-Type header, lower case, without its parameters (`text/plain; charset=utf-8` -> `text/plain`). */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? "").split(";", 1)[0]!.trim().toLowerCase();
}

/**
 * The body as a Buffer (`req.body` and `req.rawBody`), for the one route that takes a file
 * rather than JSON; every other route keeps jsonBody. A type not in `spec.types`: 415
 * `unsupported_media_type` (as jsonBody answers a body that is not JSON), before any byte is
 * read; past `spec.limitBytes`: 413 `payload_too_large`; no body at all: 400 `invalid_request`.
 */
export function rawBody(spec: RawBodySpec) {
  const parse = express.raw({ limit: spec.limitBytes, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    const type = mediaTypeOf(req.headers["content-type"]);
    if (!spec.types.includes(type)) {
      return next(new ApiError(415, "unsupported_media_type", `The body must be one of ${spec.types.join(", ")}, named by its Content-Type header`));
    }
    parse(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string; status?: number; message?: string };
        if (e.type === "entity.too.large") return next(payloadTooLarge(spec.limitBytes));
        if (e.type === "encoding.unsupported") return next(new ApiError(415, "unsupported_media_type", e.message ?? "Unsupported body encoding"));
        if (typeof e.status === "number" && e.status >= 400 && e.status < 500) return next(new ApiError(400, "invalid_request", `Request body could not be read: ${e.message ?? "read error"}`));
        return next(err);
      }
      if (!Buffer.isBuffer(req.body) || req.body.length === 0) return next(ApiError.field("invalid_request", "(body)", "the request needs a body: the document's bytes"));
      req.rawBody = req.body;
      next();
    });
  };
}
