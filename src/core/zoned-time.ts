/**
 * Wall-clock time in IANA time zones, for the control plane's schedules (calling hours,
 * appointment reminders). Zones come from settings: callers check them (an unknown zone makes
 * Intl throw).
 */

/** Days as `Intl` writes them, lower case: "mon" .. "sun". */
export type Weekday = "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun";

const MINUTE_MS = 60_000;

/** `value` when it names a time zone this runtime knows (settings are free-form), else null. */
export function knownZone(value: unknown): string | null {
  if (typeof value !== "string" || value.trim() === "") return null;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value.trim() });
    return value.trim();
  } catch {
    return null;
  }
}

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  weekday: Weekday;
}

/** Building a formatter is far costlier than using one: one per zone, kept. */
const formatters = new Map<string, Intl.DateTimeFormat>();

export function localParts(zone: string, atMs: number): LocalParts {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
    });
    formatters.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(atMs)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    weekday: parts.weekday!.toLowerCase().slice(0, 3) as Weekday,
  };
}

/**
 * The instant at which the zone's clock reads `minuteOfDay` on the given date. A local time
 * that does not exist (skipped by a DST change) comes out as the instant the clock jumps
 * past it: the first at which the clock reads that time or later.
 */
export function localToUtc(zone: string, year: number, month: number, day: number, minuteOfDay: number): number {
  const wanted = Date.UTC(year, month - 1, day) + minuteOfDay * MINUTE_MS;
  // Guess with the offset at the wanted wall time read as UTC, then correct with the offset at the guess.
  let guess = wanted - offsetOf(zone, wanted);
  guess = wanted - offsetOf(zone, guess);
  return guess;
}

/** The zone's offset from UTC at `atMs`, in ms (local wall time minus UTC). */
function offsetOf(zone: string, atMs: number): number {
  const p = localParts(zone, atMs);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
  return asUtc - Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
}
