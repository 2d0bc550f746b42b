import { nowIso } from "./time.js";

/**
 * The `updated_at` for a change to a row last updated at `previous`: now, or 1 ms after
 * `previous` when the clock has not moved on, so every change moves `updated_at` forward.
 */
export function nextUpdatedAt(previous: string): string {
  const now = nowIso();
  return now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();
}
