import { ApiError } from "../core/api-error.js";
import { MAX_CALL_DURATION_SECONDS } from "../services/call-limits.js";

/** A media call's `max_duration` parameter (seconds); the longest call allowed when absent. */
export function parseMaxDuration(value: string | null): number {
  if (value === null) return MAX_CALL_DURATION_SECONDS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CALL_DURATION_SECONDS) throw ApiError.field("invalid_request", "max_duration", `must be an integer from 1 to ${MAX_CALL_DURATION_SECONDS}`);
  return n;
}

/** A media call's `context` parameter: a JSON object of at most 4096 characters; `{}` when absent. */
export function parseContext(value: string | null): Record<string, unknown> {
  if (value === null) return {};
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && value.length <= 4096) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw ApiError.field("invalid_request", "context", "must be a JSON object of at most 4096 characters");
}
