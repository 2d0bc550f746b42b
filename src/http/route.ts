import type { Request, Response } from "express";
import type { z } from "zod";
import type { AuthContext } from "./auth-context.js";
import type { RawBodySpec } from "./middleware/raw-body.js";

export const HTTP_METHODS = ["get", "post", "patch", "delete"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

type AnyObjectSchema = z.ZodType;

export interface HandlerInput<P, Q, B> {
  auth: AuthContext;
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

/**
 * One operation of the API: the single place that says its path, permission, request
 * schemas, response schema and status. The router validates with these schemas and the
 * OpenAPI document is generated from them, so the two cannot drift apart.
 */
export interface RouteSpec<
  P extends AnyObjectSchema = AnyObjectSchema,
  Q extends AnyObjectSchema = AnyObjectSchema,
  B extends AnyObjectSchema = AnyObjectSchema,
> {
  method: HttpMethod;
  /** Express-style path, for example `/v1/agents/:agent_id`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Permission the key needs; null means any valid key. */
  permission: string | null;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body is a file of one of these media types, not JSON: the handler gets it as a Buffer
   * (`body`), its type in the Content-Type header. Exclusive with `body`.
   */
  rawBody?: RawBodySpec;
  /** Response body schema (for the OpenAPI document). */
  response: z.ZodType;
  status: number;
  /** Another success status the handler may answer with (`res.locals.status`), with the same body: documented too. */
  alsoStatus?: { status: number; description: string };
  /** Error codes this operation can answer with (for the OpenAPI document). */
  errors: readonly string[];
  /**
   * The response holds a secret shown once (a new token): it is never stored for
   * `Idempotency-Key` replays, which would keep it in plain text for a day. The header is ignored.
   */
  secretInResponse?: true;
  /**
   * Top-level response fields that hold a secret shown once (a token, a signing secret). An
   * `Idempotency-Key` replay keeps them only encrypted under the caller's API key, so the
   * database cannot reveal them and only a retry with that key gets them back (see
   * middleware/idempotency.ts).
   */
  secretFields?: readonly string[];
  /** The response is this media type, not JSON: the handler returns its text (`response` is then a string schema). */
  produces?: "text/csv";
  /** The file name a client saving a `produces` response should use. */
  fileName?: (params: Record<string, string>) => string;
  handler: (input: HandlerInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown>;
}

/** Keeps each route's handler typed by its own schemas. */
export function defineRoute<P extends AnyObjectSchema, Q extends AnyObjectSchema, B extends AnyObjectSchema>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}
