import { dateParts } from "../core/calendar.js";
import { CALLING_DAYS, parseClock, type CallingDay, type CallingHours } from "../core/calling-hours.js";

/**
 * When an agent takes appointments: a daily window on some days of the week, in the business's
 * own calendar (dates and times as the caller says them, no time zone). The agent's
 * `metadata.booking_hours` `{start: "HH:MM", end: "HH:MM", days: ["mon", ...]}` (the shape of a
 * campaign's calling hours), by default 09:00-17:00 Monday to Friday. An appointment must
 * start and end inside the window and overlap no other scheduled appointment of the agent.
 */
export type BookingHours = CallingHours;

export const DEFAULT_BOOKING_HOURS: BookingHours = Object.freeze({ start: "09:00", end: "17:00", days: ["mon", "tue", "wed", "thu", "fri"] }) as BookingHours;

/** Free times are offered on this grid (minutes from the window's start). */
const OFFER_STEP_MINUTES = 30;
/** How far ahead free times are looked for. */
const OFFER_DAYS = 14;

/** An appointment's place in the calendar: YYYY-MM-DD, HH:MM, minutes. */
export interface BookedSlot {
  date: string;
  time: string;
  duration_minutes: number;
}

/** The agent's booking hours from its metadata; null when `booking_hours` is there but malformed (with why). */
export function bookingHoursOf(metadata: Record<string, unknown>): { hours: BookingHours } | { problem: string } {
  const value = metadata.booking_hours;
  if (value === undefined || value === null) return { hours: DEFAULT_BOOKING_HOURS };
  if (typeof value !== "object" || Array.isArray(value)) return { problem: 'must be an object {start: "HH:MM", end: "HH:MM", days: ["mon", ...]}' };
  const { start, end, days } = value as Record<string, unknown>;
  const from = typeof start === "string" ? parseClock(start) : null;
  const to = typeof end === "string" ? parseClock(end) : null;
  if (from === null) return { problem: 'start must be a time "HH:MM"' };
  if (to === null) return { problem: 'end must be a time "HH:MM"' };
  if (from >= to) return { problem: "end must be after start" };
  const dayList = days === undefined ? [...CALLING_DAYS] : days;
  if (!Array.isArray(dayList) || dayList.length === 0 || !dayList.every((d) => (CALLING_DAYS as readonly unknown[]).includes(d))) {
    return { problem: `days must list some of ${CALLING_DAYS.join(", ")}` };
  }
  return { hours: { start: start as string, end: end as string, days: [...new Set(dayList as CallingDay[])] } };
}

/** Why `wanted` cannot be booked, or null when it can. */
export function bookingRefusal(hours: BookingHours, taken: readonly BookedSlot[], wanted: BookedSlot): "outside_booking_hours" | "slot_taken" | null {
  if (!insideHours(hours, wanted)) return "outside_booking_hours";
  return taken.some((slot) => overlaps(slot, wanted)) ? "slot_taken" : null;
}

/**
 * Up to `count` free times from `wanted` on (the same day after it, then the following days),
 * on the half-hour grid of the booking window.
 */
export function nearestFreeTimes(hours: BookingHours, taken: readonly BookedSlot[], wanted: BookedSlot, count: number): Array<{ date: string; time: string }> {
  const free: Array<{ date: string; time: string }> = [];
  const start = parseClock(hours.start)!;
  const end = parseClock(hours.end)!;
  const wantedMinute = parseClock(wanted.time)!;
  for (let day = 0; day <= OFFER_DAYS && free.length < count; day++) {
    const date = addDays(wanted.date, day);
    for (let minute = start; minute + wanted.duration_minutes <= end && free.length < count; minute += OFFER_STEP_MINUTES) {
      if (day === 0 && minute <= wantedMinute) continue;
      const slot = { date, time: clock(minute), duration_minutes: wanted.duration_minutes };
      if (bookingRefusal(hours, taken, slot) === null) free.push({ date, time: slot.time });
    }
  }
  return free;
}

function insideHours(hours: BookingHours, slot: BookedSlot): boolean {
  const from = parseClock(slot.time)!;
  return hours.days.includes(weekday(slot.date)) && from >= parseClock(hours.start)! && from + slot.duration_minutes <= parseClock(hours.end)!;
}

function overlaps(a: BookedSlot, b: BookedSlot): boolean {
  if (a.date !== b.date) return false;
  const [aFrom, bFrom] = [parseClock(a.time)!, parseClock(b.time)!];
  return aFrom < bFrom + b.duration_minutes && bFrom < aFrom + a.duration_minutes;
}

/** The day `days` after YYYY-MM-DD `date`. */
export function addDays(date: string, days: number): string {
  const { year, month, day } = dateParts(date);
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

function weekday(date: string): CallingDay {
  const { year, month, day } = dateParts(date);
  return CALLING_DAYS[(new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7]!;
}

function clock(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;
}
