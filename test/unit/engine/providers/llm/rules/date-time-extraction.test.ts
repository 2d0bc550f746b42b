import { describe, expect, it } from "vitest";
import { findDateTime } from "../../../../../../engine/providers/llm/rules/date-time-extraction.js";
import type { WallClock } from "../../../../../../engine/providers/llm/rules/wall-clock.js";

/** Saturday, March 1, 2025, 10:00 on the business's wall clock. */
const NOW: WallClock = { date: { year: 2025, month: 3, day: 1 }, time: { hour: 10, minute: 0 } };

function found(text: string, timeExpected = false): string {
  const { date, time } = findDateTime(text, NOW, { timeExpected });
  const d = date ? `${date.year}-${String(date.month).padStart(2, "0")}-${String(date.day).padStart(2, "0")}` : "-";
  const t = time ? `${String(time.hour).padStart(2, "0")}:${String(time.minute).padStart(2, "0")}` : "-";
  return `${d} ${t}`;
}

describe("findDateTime", () => {
  it.each([
    ["tuesday at three in the afternoon", "2025-03-04 15:00"],
    ["tomorrow at nine", "2025-03-02 09:00"],
    ["tomorrow at nine p m", "2025-03-02 21:00"],
    ["monday at ten thirty", "2025-03-03 10:30"],
    ["friday at half past two", "2025-03-07 14:30"],
    ["friday at quarter to four", "2025-03-07 15:45"],
    ["on the twenty third at two", "2025-03-23 14:00"],
    ["march the twenty third", "2025-03-23 -"],
    ["the fifteenth of april at noon", "2025-04-15 12:00"],
    ["wednesday at five in the evening", "2025-03-05 17:00"],
    ["thursday at seven in the morning", "2025-03-06 07:00"],
    ["tomorrow morning at six", "2025-03-02 06:00"],
    ["tomorrow evening at six", "2025-03-02 18:00"],
    ["tonight at eight", "2025-03-01 20:00"],
    ["next tuesday at eleven", "2025-03-04 11:00"],
    ["i'd like a cleaning tomorrow at three pm", "2025-03-02 15:00"],
    ["sunday around eleven", "2025-03-02 11:00"],
    ["today at four", "2025-03-01 16:00"],
    ["this afternoon at four", "2025-03-01 16:00"],
    ["at eight", "- 08:00"],
    ["at one thirty", "- 13:30"],
    ["twelve thirty", "- 12:30"],
    ["at three o clock", "- 15:00"],
    ["at 3:00 PM", "- 15:00"],
  ])("%s -> %s", (text, expected) => expect(found(text)).toBe(expected));

  it("never goes into the past", () => {
    // Today is Saturday: "saturday" is next week; March 1 is today, February 2 next year.
    expect(found("saturday")).toBe("2025-03-08 -");
    expect(found("february second")).toBe("2026-02-02 -");
    expect(found("the first")).toBe("2025-03-01 -");
    expect(found("this saturday")).toBe("2025-03-01 -");
  });

  it("leaves days that already passed for the caller to judge", () => {
    expect(found("yesterday")).toBe("2025-02-28 -");
  });

  it("reads bare numbers as times only when a time is expected", () => {
    expect(found("three")).toBe("- -");
    expect(found("three", true)).toBe("- 15:00");
    expect(found("um ten thirty", true)).toBe("- 10:30");
    expect(found("the twenty third", true)).toBe("2025-03-23 -");
  });

  it("finds nothing in words that are not dates", () => {
    for (const text of ["my name is john smith", "i sat down", "a table for two", "next week", "give me a second", "this is my first visit"]) {
      expect(found(text), text).toBe("- -");
    }
  });
});
