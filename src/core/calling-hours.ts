import { getCountry } from "countries-and-timezones";
import { parsePhoneNumberFromString } from "libphonenumber-js/min";
import { localParts, localToUtc } from "./zoned-time.js";

/**
 * When a campaign may call a contact: a daily window (`start` to `end`, local time) on some
 * days of the week, read in the contact's zone. The zone, in this order: the contact's own
 * `timezone`; else the zone of its number's country when that country has one; else the
 * campaign's `settings.timezone`; else, for a country with several zones, every zone of the
 * country at once (key `country:XX`): the contact is called only while the window holds in
 * all of them, the strict reading of calling-hours rules (for the US, 08:00-21:00 becomes
 * 13:00-21:00 Eastern, 08:00-16:00 in Hawaii).
 */

export const CALLING_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type CallingDay = (typeof CALLING_DAYS)[number];

/** A daily window, "HH:MM" 24-hour local times, `start` before `end` ("24:00" allowed), on `days`. */
export interface CallingHours {
  start: string;
  end: string;
  days: CallingDay[];
}

/** The hours most telemarketing rules allow, every day. */
export const DEFAULT_CALLING_HOURS: CallingHours = Object.freeze({ start: "08:00", end: "21:00", days: [...CALLING_DAYS] }) as CallingHours;

const COUNTRY_PREFIX = "country:";
/** How far ahead `nextOpening` looks: a week covers every allowed day once. */
const LOOKAHEAD_DAYS = 8;

/** Minutes since midnight of "HH:MM" (00:00 to 24:00), or null. */
export function parseClock(value: string): number | null {
  const match = /^(\d{2}):(\d{2})$/.exec(value);
  if (!match) return null;
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  if (minutes > 59 || hours > 24 || (hours === 24 && minutes > 0)) return null;
  return hours * 60 + minutes;
}

/** Whether `name` is an IANA time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The zone key a contact is called in (see the module comment); null when none is known. */
export function contactZone(phone: string, contactTimeZone: string | null, campaignTimeZone: string | null): string | null {
  if (contactTimeZone) return contactTimeZone;
  const country = parsePhoneNumberFromString(phone)?.country;
  const zones = country ? (getCountry(country)?.timezones ?? []) : [];
  if (zones.length === 1) return zones[0]!;
  if (campaignTimeZone) return campaignTimeZone;
  return zones.length > 1 ? `${COUNTRY_PREFIX}${country}` : null;
}

/** Whether `atMs` is inside the window in the zone (in every zone of a country key). */
export function isOpen(hours: CallingHours, zoneKey: string, atMs: number): boolean {
  return zonesOf(zoneKey).every((zone) => openIn(hours, zone, atMs));
}

/**
 * The first instant at or after `fromMs` (to the minute) at which the window is open, or null
 * when it does not open within a week (a window no instant of all a country's zones shares).
 */
export function nextOpening(hours: CallingHours, zoneKey: string, fromMs: number): number | null {
  if (isOpen(hours, zoneKey, fromMs)) return fromMs;
  const start = parseClock(hours.start)!;
  const candidates: number[] = [];
  for (const zone of zonesOf(zoneKey)) {
    const today = localParts(zone, fromMs);
    for (let day = 0; day <= LOOKAHEAD_DAYS; day++) {
      const date = new Date(Date.UTC(today.year, today.month - 1, today.day + day));
      const at = localToUtc(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), start);
      if (at >= fromMs) candidates.push(at);
    }
  }
  candidates.sort((a, b) => a - b);
  return candidates.find((at) => isOpen(hours, zoneKey, at)) ?? null;
}

function zonesOf(zoneKey: string): readonly string[] {
  if (!zoneKey.startsWith(COUNTRY_PREFIX)) return [zoneKey];
  return getCountry(zoneKey.slice(COUNTRY_PREFIX.length))?.timezones ?? [];
}

function openIn(hours: CallingHours, zone: string, atMs: number): boolean {
  const local = localParts(zone, atMs);
  if (!hours.days.includes(local.weekday)) return false;
  const minute = local.hour * 60 + local.minute;
  return minute >= parseClock(hours.start)! && minute < parseClock(hours.end)!;
}
