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
 * JSON, or a body that cannot be read (a compressed one that does not decompress): 400
 * `invalid_json`; a body that is not JSON: 415 `unsupported_media_type`.
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
      const e = err as { type?: string; message?: string; status?: number };
      if (e.type === "entity.too.large") {
        return next(payloadTooLarge(limitBytes));
      }
      if (e.type === "entity.parse.failed") {
        return next(new ApiError(400, "invalid_json", `Request body is not valid JSON: ${e.message ?? "parse error"}`));
      }
      if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") {
        return next(new ApiError(415, "unsupported_media_type", e.message ?? "Unsupported body encoding"));
      }
      // Any other error reading the body is the client's: a gzip, deflate or br body that does
      // not decompress, a body shorter than its Content-Length. Not a 500.
      if (typeof e.status === "number" && e.status >= 400 && e.status < 500) {
        const encoding = req.headers["content-encoding"];
        const how = encoding && encoding !== "identity" ? ` (Content-Encoding: ${encoding})` : "";
        return next(new ApiError(400, "invalid_json", `Request body could not be read${how}: ${e.message ?? "read error"}`));
      }
      return next(err);
    });
  };
}

/** The refusal of a body past `limitBytes`. */
export function payloadTooLarge(limitBytes: number): ApiError {
  return new ApiError(413, "payload_too_large", `Request body is larger than the limit of ${limitBytes} bytes`);
}
