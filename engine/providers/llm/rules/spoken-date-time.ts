import { MONTH_NAMES, WEEKDAY_NAMES, weekdayOf, type CalendarDate, type ClockTime } from "./calendar.js";

/** "Tuesday, March 4", with the year only when it is not this year: "Tuesday, March 3, 2026". */
export function spokenDate(date: CalendarDate, today: CalendarDate): string {
  const base = `${WEEKDAY_NAMES[weekdayOf(date)]}, ${MONTH_NAMES[date.month - 1]} ${date.day}`;
  return date.year === today.year ? base : `${base}, ${date.year}`;
}

/** "3:00 PM", "12:30 PM", "9:15 AM". */
export function spokenTime(time: ClockTime): string {
  const hour12 = time.hour % 12 === 0 ? 12 : time.hour % 12;
  return `${hour12}:${String(time.minute).padStart(2, "0")} ${time.hour < 12 ? "AM" : "PM"}`;
}
