import { isoDate, isoTime, type CalendarDate, type ClockTime } from "./calendar.js";
import type { Service } from "./service-extraction.js";

/** The order in which the agent asks for what is missing. */
export const BOOKING_SLOTS = ["service", "date", "time", "name"] as const;
export type BookingSlot = (typeof BOOKING_SLOTS)[number];

/** An appointment being put together over several turns; null slots are still to ask. */
export interface BookingDraft {
  service: Service | null;
  date: CalendarDate | null;
  time: ClockTime | null;
  name: string | null;
}

export function missingSlot(draft: BookingDraft): BookingSlot | null {
  return BOOKING_SLOTS.find((slot) => draft[slot] === null) ?? null;
}

/** The `book_appointment` tool arguments of a complete draft. */
export function bookingArguments(draft: BookingDraft): Record<string, unknown> {
  const { service, date, time, name } = draft;
  if (!service || !date || !time || !name) throw new Error("booking draft is incomplete");
  return {
    customer_name: name,
    date: isoDate(date),
    time: isoTime(time),
    service: service.name,
    ...(service.durationMinutes !== null ? { duration_minutes: service.durationMinutes } : {}),
  };
}
