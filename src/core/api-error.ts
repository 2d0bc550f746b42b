/** One field's problem, as listed in `error.details.fields`. */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * The only error type the HTTP layer renders. Services throw it; the error middleware turns it
 * into `{error: {code, message, details?}, meta: {request_id}}` with `status`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  /** A 400 that names the offending field, with the field's own code when it has one. */
  static field(code: string, field: string, message: string): ApiError {
    return new ApiError(400, code, `${field}: ${message}`, { fields: [{ field, message }] });
  }
}

/** A refusal that passes with time: a limit reached (429) or no capacity now (503). */
export function isRetryLater(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 429 || err.status === 503);
}
