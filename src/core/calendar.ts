/** Appointment dates and times: local wall-clock values, no time zone. */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** `YYYY-MM-DD` naming a day that exists (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const check = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps years below 100 as they are.
  check.setUTCFullYear(y, m - 1, d);
  return check.getUTCFullYear() === y && check.getUTCMonth() === m - 1 && check.getUTCDate() === d;
}

/** `HH:MM` on a 24-hour clock, 00:00 to 23:59. */
export function isClockTime(value: string): boolean {
  return TIME.test(value);
}

/** The parts of a stored `YYYY-MM-DD` date (already checked with isCalendarDate). */
export function dateParts(date: string): { year: number; month: number; day: number } {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number];
  return { year, month, day };
}

/** The parts of a stored `HH:MM` time (already checked with isClockTime). */
export function timeParts(time: string): { hour: number; minute: number } {
  const [hour, minute] = time.split(":").map(Number) as [number, number];
  return { hour, minute };
}
