import type { NextFunction, Request, Response } from "express";
import { ApiError } from "../../core/api-error.js";

/** How much of a bad segment the message quotes (a path can be kilobytes). */
const QUOTED = 60;

/** Whether `text` (a path, or a segment of one) is valid percent-encoded UTF-8. */
export function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses a path whose percent-encoding does not decode (`%zz`, a cut `%E0%A4`, an encoded
 * lone surrogate) with 400 `invalid_request` on the field `(path)`. The router would otherwise
 * fail to decode the path parameter and the request would end as a 500.
 */
export function pathEncoding() {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (decodes(req.path)) return next();
    const segment = req.path.split("/").find((s) => !decodes(s)) ?? req.path;
    const quoted = segment.length > QUOTED ? `${segment.slice(0, QUOTED)}...` : segment;
    const message = `the segment '${quoted}' is not valid percent-encoded UTF-8`;
    next(new ApiError(400, "invalid_request", `(path): ${message}`, { fields: [{ field: "(path)", message }] }));
  };
}
