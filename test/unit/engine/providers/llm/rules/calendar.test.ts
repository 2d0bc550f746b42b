import { describe, expect, it } from "vitest";
import { addDays, isoDate, isoTime, nextDayOfMonth, weekdayOf } from "../../../../../../engine/providers/llm/rules/calendar.js";
import { spokenDate, spokenTime } from "../../../../../../engine/providers/llm/rules/spoken-date-time.js";
import { WallClockReader } from "../../../../../../engine/providers/llm/rules/wall-clock.js";

describe("calendar", () => {
  it("steps over month and year ends", () => {
    expect(addDays({ year: 2024, month: 12, day: 31 }, 1)).toEqual({ year: 2025, month: 1, day: 1 });
    expect(addDays({ year: 2024, month: 2, day: 28 }, 1)).toEqual({ year: 2024, month: 2, day: 29 });
    expect(weekdayOf({ year: 2025, month: 3, day: 4 })).toBe(2);
  });

  it("finds the next day of the month, skipping months that lack it", () => {
    expect(nextDayOfMonth({ year: 2025, month: 3, day: 5 }, 3)).toEqual({ year: 2025, month: 4, day: 3 });
    expect(nextDayOfMonth({ year: 2025, month: 3, day: 5 }, 5)).toEqual({ year: 2025, month: 3, day: 5 });
    expect(nextDayOfMonth({ year: 2025, month: 4, day: 1 }, 31)).toEqual({ year: 2025, month: 5, day: 31 });
    expect(nextDayOfMonth({ year: 2025, month: 1, day: 31 }, 30)).toEqual({ year: 2025, month: 3, day: 30 });
    expect(nextDayOfMonth({ year: 2025, month: 1, day: 1 }, 32)).toBeNull();
  });

  it("formats dates and times for the tool and for speech", () => {
    expect(isoDate({ year: 2025, month: 3, day: 4 })).toBe("2025-03-04");
    expect(isoTime({ hour: 9, minute: 5 })).toBe("09:05");
    expect(spokenDate({ year: 2025, month: 3, day: 4 }, { year: 2025, month: 3, day: 1 })).toBe("Tuesday, March 4");
    expect(spokenDate({ year: 2026, month: 1, day: 2 }, { year: 2025, month: 12, day: 30 })).toBe("Friday, January 2, 2026");
    expect(spokenTime({ hour: 15, minute: 0 })).toBe("3:00 PM");
    expect(spokenTime({ hour: 12, minute: 30 })).toBe("12:30 PM");
    expect(spokenTime({ hour: 0, minute: 15 })).toBe("12:15 AM");
    expect(spokenTime({ hour: 9, minute: 45 })).toBe("9:45 AM");
  });
});

describe("WallClockReader", () => {
  it("reads an instant in the business's time zone", () => {
    expect(new WallClockReader("America/Los_Angeles").read(new Date("2025-03-01T05:30:00Z"))).toEqual({
      date: { year: 2025, month: 2, day: 28 },
      time: { hour: 21, minute: 30 },
    });
    expect(new WallClockReader("Asia/Tokyo").read(new Date("2025-03-01T20:00:00Z")).date).toEqual({ year: 2025, month: 3, day: 2 });
  });

  it("falls back to UTC for an unknown zone", () => {
    expect(new WallClockReader("Mars/Olympus").read(new Date("2025-03-01T00:00:00Z"))).toEqual({
      date: { year: 2025, month: 3, day: 1 },
      time: { hour: 0, minute: 0 },
    });
  });
});
