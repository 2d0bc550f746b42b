let lastIssuedMs = 0;

/**
 * API timestamps: UTC ISO 8601 with milliseconds, fixed width so they sort as text.
 * Strictly increasing within the process (a 1 ms step when the clock has not moved), so rows
 * created one after the other list in the order they were made, not by their random ids.
 */
export function nowIso(): string {
  lastIssuedMs = Math.max(Date.now(), lastIssuedMs + 1);
  return new Date(lastIssuedMs).toISOString();
}

/** Strict ISO 8601 date or date-time (with `Z` or an offset when a time is given). */
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/;

/** Parses an ISO 8601 date or date-time into a normalised UTC string, or null when invalid. */
export function parseIsoTimestamp(value: string): string | null {
  if (!ISO_8601.test(value)) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const [datePart] = value.split(/[T ]/);
  // Date.parse rolls 2026-02-31 over to March; refuse dates that do not exist.
  const [y, m, d] = (datePart ?? "").split("-").map(Number);
  const check = new Date(Date.UTC(y!, m! - 1, d!));
  if (check.getUTCMonth() !== m! - 1 || check.getUTCDate() !== d) return null;
  return new Date(ms).toISOString();
}

/** First instant of the UTC calendar month containing `iso`. */
export function startOfUtcMonth(date: Date): string {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)).toISOString();
}
