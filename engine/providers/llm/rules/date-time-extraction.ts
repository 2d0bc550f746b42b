import * as chrono from "chrono-node";
import { normalizeNumberWords } from "../../../text/number-words.js";
import { addDays, compareDates, nextDayOfMonth, type CalendarDate, type ClockTime } from "./calendar.js";
import type { WallClock } from "./wall-clock.js";

/** The appointment day and time a caller mentioned; null for what they did not say. */
export interface DateTimeMention {
  date: CalendarDate | null;
  time: ClockTime | null;
}

const MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december";
/** Only text with one of these goes to chrono: it saves time and keeps "i sat down" from being a Saturday. */
const DATE_CUES = new RegExp(
  `\\d|today|tonight|tomorrow|yesterday|noon|midnight|morning|afternoon|evening|week|` +
    `monday|tuesday|wednesday|thursday|friday|saturday|sunday|${MONTHS}`,
);
/** chrono reads these abbreviations as dates; recognizers write them as ordinary words. */
const ABBREVIATIONS = new Set([
  "sat", "sun", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri",
  "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
]);
/** Spans too wide to book: the caller still has to pick a day. */
const VAGUE = /^(?:next|this|coming|following) (?:week|month|year)$/;
/** Phrases that name today without chrono marking the day as known. */
const TODAY = /\b(today|tonight|this (morning|afternoon|evening))\b/;

/**
 * Finds the appointment date and time in a caller's cleaned, lower-case words, relative to the
 * business's wall clock. Number words are normalised first ("three in the afternoon" ->
 * "3 in the afternoon"); chrono-node does the rest, with these rules on top:
 * - dates are never in the past: a bare weekday is its next occurrence (today's weekday means
 *   next week: callers say "today" for today), "the 23rd" is the next 23rd;
 * - an hour from 1 to 7 without "am", "pm" or "morning" is in the afternoon (appointments are
 *   in business hours): "at three" is 15:00, "at nine" is 09:00;
 * - with `timeExpected` (the agent asked for a time, or the booking lacks one) a bare "three"
 *   or "ten thirty" is a time.
 * Past days ("yesterday") come back as they are; the caller of this decides what to say.
 */
export function findDateTime(words: string, now: WallClock, options: { timeExpected: boolean }): DateTimeMention {
  const text = prepare(normalizeNumberWords(words));
  const mention: DateTimeMention = { date: null, time: null };
  if (!DATE_CUES.test(text)) return mention;
  // The business's wall clock as a Date in the process's zone: chrono's own `timezone` option
  // resolved weekdays differently depending on the machine's TZ (checked), this does not.
  const reference = new Date(now.date.year, now.date.month - 1, now.date.day, now.time.hour, now.time.minute);
  for (const result of chrono.parse(text, reference, { forwardDate: true })) {
    if (ABBREVIATIONS.has(result.text) || VAGUE.test(result.text)) continue;
    const start = result.start;
    if (mention.date === null && (start.isCertain("day") || start.isCertain("weekday") || TODAY.test(result.text))) {
      let date = { year: start.get("year")!, month: start.get("month")!, day: start.get("day")! };
      const bareWeekday = start.isCertain("weekday") && !start.isCertain("day");
      if (bareWeekday && compareDates(date, now.date) === 0 && !/\b(this|today)\b/.test(result.text)) date = addDays(date, 7);
      mention.date = date;
    }
    if (mention.time === null && start.isCertain("hour")) {
      let hour = start.get("hour")!;
      if (!start.isCertain("meridiem") && !/\bmorning\b/.test(result.text) && hour >= 1 && hour <= 7) hour += 12;
      mention.time = { hour, minute: start.get("minute") ?? 0 };
    }
  }
  mention.date ??= dayOfMonth(text, now.date);
  if (options.timeExpected) mention.time ??= bareHour(text);
  return mention;
}

/** "around 11", "about 3:30", "after 2" (not "about 3 people", "by the 3rd"). */
const APPROXIMATE_TIME =
  /\b(?:at )?(?:around|about|approximately|roughly|say|after|by) (\d{1,2}(?::\d\d)?)(?![\d:]|st|nd|rd|th| (?:minute|hour|day|week|month|year|people|person)s?\b)/g;

/** Rewrites what chrono misses: "5 in the evening", "march the 23rd", "around 11". */
function prepare(text: string): string {
  return text
    .replace(APPROXIMATE_TIME, "at $1")
    .replace(/\b(\d{1,2}(?::\d\d)?)(?: o'clock)? in the morning\b/g, "$1 am")
    .replace(/\b(\d{1,2}(?::\d\d)?)(?: o'clock)? in the (?:afternoon|evening)\b/g, "$1 pm")
    .replace(new RegExp(`\\b(${MONTHS}) the (\\d{1,2}(?:st|nd|rd|th))\\b`, "g"), "$1 $2");
}

/** "the 23rd", "on the 5th", or a bare "23rd": the next such day of the month. */
function dayOfMonth(text: string, today: CalendarDate): CalendarDate | null {
  const match = /(?:^|\b(?:the|on) )(\d{1,2})(?:st|nd|rd|th)\b/.exec(text);
  return match ? nextDayOfMonth(today, Number(match[1])) : null;
}

/** A lone "3" or "3:30" (from "three", "three thirty") when a time is expected. */
function bareHour(text: string): ClockTime | null {
  const match = /\b(\d{1,2})(?::(\d\d))?\b/.exec(text);
  if (!match) return null;
  let hour = Number(match[1]);
  const minute = Number(match[2] ?? 0);
  if (hour < 1 || hour > 12 || minute > 59) return null;
  if (hour <= 7) hour += 12;
  return { hour, minute };
}
