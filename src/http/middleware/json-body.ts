import express, { type NextFunction, type Request, type Response } from "express";
import { ApiError } from "../../core/api-error.js";

declare module "express-serve-static-core" {
  interface Request {
    /** The body exactly as received (idempotency hashes it). */
    rawBody?: Buffer;
  }
}

/**
 * JSON bodies only, up to `limitBytes`. Over the limit: 413 `payload_too_large`; malformed
 * JSON: 400 `invalid_json`; a body that is not JSON: 415 `unsupported_media_type`.
 */
export function jsonBody(limitBytes: number) {
  const parse = express.json({
    limit: limitBytes,
    strict: false,
    type: () => true,
    verify: (req: Request, _res, buf) => {
      req.rawBody = buf;
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const length = Number(req.headers["content-length"] ?? 0);
    const hasBody = length > 0 || req.headers["transfer-encoding"] !== undefined;
    if (!hasBody) return next();
    const type = req.headers["content-type"] ?? "";
    if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
      return next(new ApiError(415, "unsupported_media_type", "Request bodies must be JSON with Content-Type: application/json"));
    }
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { type?: string; message?: string };
      if (e.type === "entity.too.large") {
        return next(new ApiError(413, "payload_too_large", `Request body is larger than the limit of ${limitBytes} bytes`));
      }
      if (e.type === "entity.parse.failed") {
        return next(new ApiError(400, "invalid_json", `Request body is not valid JSON: ${e.message ?? "parse error"}`));
      }
      if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") {
        return next(new ApiError(415, "unsupported_media_type", e.message ?? "Unsupported body encoding"));
      }
      return next(err);
    });
  };
}
