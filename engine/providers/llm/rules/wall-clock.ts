import type { CalendarDate, ClockTime } from "./calendar.js";

/** The business's local date and time at one instant. */
export interface WallClock {
  date: CalendarDate;
  time: ClockTime;
}

/**
 * Reads instants as wall-clock time in one IANA time zone. An unknown zone falls back to UTC
 * (agent metadata is free-form; a typo must not break the call).
 */
export class WallClockReader {
  private readonly format: Intl.DateTimeFormat;

  constructor(timeZone: string) {
    this.format = WallClockReader.formatFor(timeZone) ?? WallClockReader.formatFor("UTC")!;
  }

  read(instant: Date): WallClock {
    const parts: Record<string, number> = {};
    for (const part of this.format.formatToParts(instant)) {
      if (part.type !== "literal") parts[part.type] = Number(part.value);
    }
    return {
      date: { year: parts.year!, month: parts.month!, day: parts.day! },
      time: { hour: parts.hour!, minute: parts.minute! },
    };
  }

  private static formatFor(timeZone: string): Intl.DateTimeFormat | null {
    try {
      return new Intl.DateTimeFormat("en-US", {
        timeZone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
      });
    } catch {
      return null;
    }
  }
}
