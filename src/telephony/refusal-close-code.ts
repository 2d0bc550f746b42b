import { ApiError, isRetryLater } from "../core/api-error.js";

/** WebSocket close codes (RFC 6455 section 7.4.1) for a call refused once its socket is open. */
export const CLOSE_POLICY_VIOLATION = 1008;
export const CLOSE_INTERNAL_ERROR = 1011;
export const CLOSE_TRY_AGAIN_LATER = 1013;

/**
 * The close code for a refusal: 1013 (try again later) for a limit that frees up (429, 503),
 * 1011 for a server fault, 1008 (policy violation) for the rest: credentials, credit, routing,
 * bad parameters.
 */
export function refusalCloseCode(err: unknown): number {
  if (!(err instanceof ApiError)) return CLOSE_POLICY_VIOLATION;
  if (isRetryLater(err)) return CLOSE_TRY_AGAIN_LATER;
  return err.status >= 500 ? CLOSE_INTERNAL_ERROR : CLOSE_POLICY_VIOLATION;
}
