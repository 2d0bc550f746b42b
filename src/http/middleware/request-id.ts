import type { NextFunction, Request, Response } from "express";
import { newId } from "../../core/ids.js";

declare module "express-serve-static-core" {
  interface Request {
    requestId: string;
  }
}

/** Gives every request an id, returned in `X-Request-Id` and in error bodies. */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    req.requestId = newId("request");
    res.setHeader("X-Request-Id", req.requestId);
    next();
  };
}
