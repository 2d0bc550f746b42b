import type { ToolResult } from "../../../tools.js";
import { compareDates, type CalendarDate, type ClockTime } from "./calendar.js";
import { spokenDate, spokenTime } from "./spoken-date-time.js";

/**
 * What the agent says when the calendar refused a day and time (a booking, or moving an
 * appointment) and offered others: "I'm sorry, Tuesday, March 4 at 3:00 PM isn't available.
 * The nearest free times are ... or .... Which day and time would suit you?". Null when the
 * refusal offered no readable time (then there is nothing to offer).
 */
export function offerFreeTimes(asked: { date: CalendarDate; time: ClockTime }, result: Extract<ToolResult, { ok: false }>, today: CalendarDate): string[] | null {
  const offered = freeTimes(result.data?.alternatives);
  if (offered.length === 0) return null;
  // Times of one day are said after the day once: "Tuesday, March 4 at 3:30 PM or 4:00 PM".
  const days: Array<{ date: CalendarDate; times: string[] }> = [];
  for (const slot of offered) {
    const last = days.at(-1);
    if (last && compareDates(last.date, slot.date) === 0) last.times.push(spokenTime(slot.time));
    else days.push({ date: slot.date, times: [spokenTime(slot.time)] });
  }
  return [
    `I'm sorry, ${spokenDate(asked.date, today)} at ${spokenTime(asked.time)} isn't available.`,
    `The nearest free ${offered.length === 1 ? "time is" : "times are"} ${orList(days.map((d) => `${spokenDate(d.date, today)} at ${orList(d.times)}`))}.`,
    "Which day and time would suit you?",
  ];
}

/** The free times a refusal offers (`alternatives: [{date, time}]`), the readable ones, at most three. */
function freeTimes(value: unknown): Array<{ date: CalendarDate; time: ClockTime }> {
  if (!Array.isArray(value)) return [];
  const slots: Array<{ date: CalendarDate; time: ClockTime }> = [];
  for (const item of value) {
    const date = typeof item?.date === "string" ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(item.date) : null;
    const time = typeof item?.time === "string" ? /^(\d{2}):(\d{2})$/.exec(item.time) : null;
    if (date && time) slots.push({ date: { year: +date[1]!, month: +date[2]!, day: +date[3]! }, time: { hour: +time[1]!, minute: +time[2]! } });
  }
  return slots.slice(0, 3);
}

/** "a", "a or b", "a, b or c". */
function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}
