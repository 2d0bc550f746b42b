/** API timestamps: UTC ISO 8601 with milliseconds, fixed width so they sort as text. */
export function nowIso(): string {
  return new Date().toISOString();
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
