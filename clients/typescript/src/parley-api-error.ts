/**
 * `ParleyApiError`: what every helper throws for a non-2xx answer. It carries the API's error
 * envelope `{error: {code, message, details?}, meta: {request_id}}` as typed fields, so
 * callers branch on `code` (stable, documented in the README's "Error codes") rather than on
 * the message, and quote `requestId` when they report a problem.
 */

/** One field's problem, as listed in `details.fields` of a 400. */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ParleyApiError extends Error {
  /** The HTTP status (400, 404, 429, ...). */
  readonly status: number;
  /**
   * The API's error code (`agent_not_found`, `invalid_request`, `rate_limit_exceeded`, ...);
   * `unexpected_response` when the answer was not the API's error envelope (a proxy's page).
   */
  readonly code: string;
  /** `error.details` as the API sent it (`{fields: [{field, message}]}` for validation errors). */
  readonly details: Record<string, unknown> | undefined;
  /** The request's id (`req_...`): `meta.request_id`, or the `X-Request-Id` header. Null when neither came. */
  readonly requestId: string | null;
  /** `Retry-After` in seconds when the answer had one (429, 503). */
  readonly retryAfter: number | null;
  /** The response headers (rate-limit headers, `Allow` of a 405, ...). */
  readonly headers: Headers;
  /** The parsed body (or its text when it was not JSON). */
  readonly body: unknown;

  constructor(init: { status: number; code: string; message: string; details?: Record<string, unknown> | undefined; requestId: string | null; retryAfter: number | null; headers: Headers; body: unknown }) {
    super(init.message);
    this.name = "ParleyApiError";
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.headers = init.headers;
    this.body = init.body;
  }

  /** `details.fields` of a validation error: every field the API refused, with why. Empty otherwise. */
  get fields(): FieldProblem[] {
    const fields = this.details?.fields;
    if (!Array.isArray(fields)) return [];
    return fields.filter((f): f is FieldProblem => typeof f === "object" && f !== null && typeof f.field === "string" && typeof f.message === "string");
  }

  /**
   * The error for a non-2xx `response` whose body was already read into `body` (parsed JSON,
   * or text). Accepts the envelope with or without `meta`, as the reference asks clients to.
   */
  static fromResponse(response: Response, body: unknown): ParleyApiError {
    const envelope = isObject(body) && isObject(body.error) ? body.error : undefined;
    const code = typeof envelope?.code === "string" ? envelope.code : "unexpected_response";
    const message =
      typeof envelope?.message === "string"
        ? envelope.message
        : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${typeof body === "string" && body ? `: ${body.slice(0, 200)}` : ""}`;
    const meta = isObject(body) && isObject(body.meta) ? body.meta : undefined;
    const requestId = typeof meta?.request_id === "string" ? meta.request_id : response.headers.get("x-request-id");
    return new ParleyApiError({
      status: response.status,
      code,
      message,
      details: isObject(envelope?.details) ? envelope.details : undefined,
      requestId,
      retryAfter: retryAfterSeconds(response.headers.get("retry-after")),
      headers: response.headers,
      body,
    });
  }
}

/**
 * `Retry-After` in seconds: a whole number of seconds, or an HTTP date (seconds from now,
 * at least 0). Null when absent or unreadable.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
