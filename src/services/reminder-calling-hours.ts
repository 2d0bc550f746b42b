import { knownZone } from "../core/zoned-time.js";
import { DEFAULT_CALLING_HOURS, contactZone, isOpen, nextOpening } from "../core/calling-hours.js";

/**
 * When a reminder call may ring: the calling hours campaigns keep by default (08:00 to 21:00
 * every day), in the callee's zone read as a campaign reads a contact's (its number's country
 * when that has one zone; else the agent's `metadata.timezone`, standing in for a campaign's;
 * else every zone of the country at once), and UTC when nothing tells.
 */
function zoneOf(phone: string, agentMetadata: Record<string, unknown>): string {
  return contactZone(phone, null, knownZone(agentMetadata.timezone)) ?? "UTC";
}

/** Whether a reminder call to `phone` may ring at `atMs`. */
export function reminderCallOpen(phone: string, agentMetadata: Record<string, unknown>, atMs: number): boolean {
  return isOpen(DEFAULT_CALLING_HOURS, zoneOf(phone, agentMetadata), atMs);
}

/** The first instant at or after `fromMs` a reminder call to `phone` may ring, or null within a week. */
export function nextReminderCallOpening(phone: string, agentMetadata: Record<string, unknown>, fromMs: number): number | null {
  return nextOpening(DEFAULT_CALLING_HOURS, zoneOf(phone, agentMetadata), fromMs);
}
