import { APPOINTMENT_LIMITS as L } from "../services/appointments.js";

/** `book_appointment` arguments as the control plane stores them (the `rules` dialogue sends the same shape). */
export interface BookingArguments {
  customer_name: string;
  /** YYYY-MM-DD. */
  date: string;
  /** HH:MM, 24-hour. */
  time: string;
  service: string;
  duration_minutes?: number;
}

export type BookingCheck = { ok: true; arguments: BookingArguments } | { ok: false; problem: string };

/**
 * Checks what the model passed to `book_appointment`. A model can write "next Tuesday" or
 * "3pm" despite the schema; such a booking is refused with a reason the model can read and
 * fix, rather than stored wrong. "9:30" and "09:30:00" are taken as "09:30". The limits are
 * the API's (APPOINTMENT_LIMITS): what a caller says is held to what a key may write.
 */
export function checkBookingArguments(value: Record<string, unknown>): BookingCheck {
  const name = text(value.customer_name);
  const service = text(value.service);
  if (!name) return { ok: false, problem: "customer_name is required" };
  if (!service) return { ok: false, problem: "service is required" };
  if (name.length > L.name) return { ok: false, problem: `customer_name must be at most ${L.name} characters` };
  if (service.length > L.service) return { ok: false, problem: `service must be at most ${L.service} characters` };
  const when = checkDateTime(value);
  if (!when.ok) return when;
  const duration = value.duration_minutes;
  if (duration !== undefined && duration !== null && !(typeof duration === "number" && Number.isInteger(duration) && duration >= L.minDurationMinutes && duration <= L.maxDurationMinutes)) {
    return { ok: false, problem: `duration_minutes must be a whole number from ${L.minDurationMinutes} to ${L.maxDurationMinutes}` };
  }
  return { ok: true, arguments: { customer_name: name, date: when.date, time: when.time, service, ...(typeof duration === "number" ? { duration_minutes: duration } : {}) } };
}

/** A `date` and `time` as a model wrote them (for a booking, or moving an appointment), checked the same way. */
export function checkDateTime(value: Record<string, unknown>): { ok: true; date: string; time: string } | { ok: false; problem: string } {
  const date = text(value.date);
  const time = normaliseTime(text(value.time));
  if (!date || !isCalendarDate(date)) return { ok: false, problem: "date must be a real date written YYYY-MM-DD" };
  if (!time) return { ok: false, problem: "time must be written HH:MM (24-hour)" };
  return { ok: true, date, time };
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function normaliseTime(value: string | null): string | null {
  const match = value === null ? null : /^(\d{1,2}):(\d{2})(?::\d{2})?$/.exec(value);
  if (!match) return null;
  const [hour, minute] = [Number(match[1]), Number(match[2])];
  if (hour > 23 || minute > 59) return null;
  return `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
}
