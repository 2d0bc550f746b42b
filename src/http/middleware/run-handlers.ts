import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * Runs Express-style handlers one after another, as a route of Express's router does: each
 * goes on by calling `next()`; an error (passed to `next`, thrown, or a rejected promise)
 * skips the rest and goes to `done`, and so does the end of the list.
 */
export function runHandlers(handlers: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let index = 0;
  const next = (err?: unknown): void => {
    if (err !== undefined && err !== null) return done(err);
    const handler = handlers[index++];
    if (handler === undefined) return done();
    try {
      const result: unknown = handler(req, res, next);
      if (result instanceof Promise) result.catch((e: unknown) => next(e ?? new Error("handler rejected without a reason")));
    } catch (e) {
      next(e ?? new Error("handler threw without a reason"));
    }
  };
  next();
}

/** The handlers as one: runs them in order, then goes on (see runHandlers). */
export function inOrder(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => runHandlers(handlers, req, res, next);
}
