import express, { type NextFunction, type Request, type Response } from "express";
import { ApiError } from "../../core/api-error.js";
import { payloadTooLarge } from "./json-body.js";

/**
 * A carrier webhook's body, read raw (a Buffer, for signatures over the exact bytes) or as a
 * form, up to `limitBytes` (and, for a form, `maxParameters`). Past a bound: 413
 * `payload_too_large`; a body that cannot be read (a bad encoding, shorter than its
 * Content-Length): 400 `invalid_request`. Never a 500: anyone can send these.
 */
export function webhookBody(kind: "raw" | "form", limitBytes: number, maxParameters = 100) {
  const parse =
    kind === "raw"
      ? express.raw({ type: () => true, limit: limitBytes })
      : express.urlencoded({ extended: false, limit: limitBytes, parameterLimit: maxParameters });
  return (req: Request, res: Response, next: NextFunction) => {
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { type?: string; message?: string; status?: number };
      if (e.type === "entity.too.large") return next(payloadTooLarge(limitBytes));
      if (e.type === "parameters.too.many") return next(new ApiError(413, "payload_too_large", `Request body has more than ${maxParameters} parameters`));
      if (typeof e.status === "number" && e.status >= 400 && e.status < 500) return next(new ApiError(400, "invalid_request", `Request body could not be read: ${e.message ?? "read error"}`));
      return next(err);
    });
  };
}
