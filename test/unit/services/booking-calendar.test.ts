import { describe, expect, it } from "vitest";
import { DEFAULT_BOOKING_HOURS, bookingHoursOf, bookingRefusal, nearestFreeTimes } from "../../../src/services/booking-calendar.js";

// 2025-03-03 is a Monday.
const taken = [
  { date: "2025-03-04", time: "15:00", duration_minutes: 30 },
  { date: "2025-03-04", time: "15:30", duration_minutes: 60 },
];

describe("the agent's booking calendar", () => {
  it("reads booking_hours from metadata, defaulting to 09:00-17:00 on weekdays, and says what is wrong", () => {
    expect(bookingHoursOf({})).toEqual({ hours: DEFAULT_BOOKING_HOURS });
    expect(bookingHoursOf({ booking_hours: { start: "08:00", end: "12:00", days: ["sat"] } })).toEqual({ hours: { start: "08:00", end: "12:00", days: ["sat"] } });
    expect(bookingHoursOf({ booking_hours: { start: "8am", end: "12:00" } })).toEqual({ problem: 'start must be a time "HH:MM"' });
    expect(bookingHoursOf({ booking_hours: { start: "12:00", end: "08:00" } })).toEqual({ problem: "end must be after start" });
    expect(bookingHoursOf({ booking_hours: { start: "08:00", end: "12:00", days: ["funday"] } })).toMatchObject({ problem: expect.stringContaining("days must list") });
    expect(bookingHoursOf({ booking_hours: "weekdays" })).toMatchObject({ problem: expect.stringContaining("must be an object") });
  });

  it("refuses a time another appointment overlaps, or outside the hours", () => {
    const h = DEFAULT_BOOKING_HOURS;
    expect(bookingRefusal(h, taken, { date: "2025-03-04", time: "14:30", duration_minutes: 30 })).toBeNull();
    expect(bookingRefusal(h, taken, { date: "2025-03-04", time: "14:45", duration_minutes: 30 })).toBe("slot_taken");
    expect(bookingRefusal(h, taken, { date: "2025-03-04", time: "16:00", duration_minutes: 30 })).toBe("slot_taken");
    expect(bookingRefusal(h, taken, { date: "2025-03-04", time: "16:30", duration_minutes: 30 })).toBeNull();
    expect(bookingRefusal(h, taken, { date: "2025-03-04", time: "16:45", duration_minutes: 30 })).toBe("outside_booking_hours");
    expect(bookingRefusal(h, taken, { date: "2025-03-04", time: "08:30", duration_minutes: 30 })).toBe("outside_booking_hours");
    expect(bookingRefusal(h, taken, { date: "2025-03-08", time: "10:00", duration_minutes: 30 })).toBe("outside_booking_hours");
  });

  it("offers the next free times on the half-hour grid, over the weekend to Monday", () => {
    const h = DEFAULT_BOOKING_HOURS;
    expect(nearestFreeTimes(h, taken, { date: "2025-03-04", time: "15:00", duration_minutes: 30 }, 2)).toEqual([
      { date: "2025-03-04", time: "16:30" },
      { date: "2025-03-05", time: "09:00" },
    ]);
    expect(nearestFreeTimes(h, [], { date: "2025-03-07", time: "16:30", duration_minutes: 60 }, 1)).toEqual([{ date: "2025-03-10", time: "09:00" }]);
  });
});
