/** A day on the business's calendar, with no time zone attached. `month` is 1..12. */
export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

/** A time of day on a 24-hour clock. */
export interface ClockTime {
  hour: number;
  minute: number;
}

export const WEEKDAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;
export const MONTH_NAMES = [
  "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
] as const;

/** Days since 1970-01-01, for comparing and stepping dates without time zones. */
function dayNumber(date: CalendarDate): number {
  return Date.UTC(date.year, date.month - 1, date.day) / 86_400_000;
}

function fromDayNumber(days: number): CalendarDate {
  const d = new Date(days * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

export function compareDates(a: CalendarDate, b: CalendarDate): number {
  return dayNumber(a) - dayNumber(b);
}

export function addDays(date: CalendarDate, days: number): CalendarDate {
  return fromDayNumber(dayNumber(date) + days);
}

/** 0 = Sunday. */
export function weekdayOf(date: CalendarDate): number {
  return new Date(dayNumber(date) * 86_400_000).getUTCDay();
}

export function compareTimes(a: ClockTime, b: ClockTime): number {
  return a.hour * 60 + a.minute - (b.hour * 60 + b.minute);
}

/** The next date on or after `from` whose day of the month is `day` (skipping short months). */
export function nextDayOfMonth(from: CalendarDate, day: number): CalendarDate | null {
  if (day < 1 || day > 31) return null;
  for (let k = 0; k < 12; k++) {
    const monthIndex = from.month - 1 + k;
    const candidate = { year: from.year + Math.floor(monthIndex / 12), month: (monthIndex % 12) + 1, day };
    const real = fromDayNumber(dayNumber(candidate));
    if (real.day === day && compareDates(real, from) >= 0) return real;
  }
  return null;
}

/** "2025-03-04" */
export function isoDate(date: CalendarDate): string {
  return `${date.year}-${pad(date.month)}-${pad(date.day)}`;
}

/** "15:00" */
export function isoTime(time: ClockTime): string {
  return `${pad(time.hour)}:${pad(time.minute)}`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
