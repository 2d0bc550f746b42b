/**
 * The webhook event catalogue. The reference gives two lists that overlap but differ; a
 * subscription accepts any name from either (their union), or `*` alone for every event.
 */

/** Names the webhook subscription reference lists. */
export const SUBSCRIPTION_EVENTS = [
  "call.started",
  "call.ringing",
  "call.answered",
  "call.completed",
  "call.failed",
  "call.recording.ready",
  "call.transcript.ready",
  "agent.created",
  "agent.updated",
  "agent.deleted",
] as const;

/** Names the webhooks guide lists. */
export const GUIDE_EVENTS = [
  "call.initiated",
  "call.answered",
  "call.completed",
  "call.failed",
  "call.transferred",
  "appointment.created",
  "appointment.updated",
  "appointment.cancelled",
  "appointment.reminder",
  "agent.created",
  "agent.updated",
  "phone_number.assigned",
  "phone_number.released",
  "credits.low",
] as const;

/** Parley's own events, which the reference does not list: a campaign's progress, an agent test run's end. */
export const PARLEY_EVENTS = ["campaign.started", "campaign.paused", "campaign.completed", "campaign.cancelled", "test_run.completed"] as const;

export type EventName = (typeof SUBSCRIPTION_EVENTS)[number] | (typeof GUIDE_EVENTS)[number] | (typeof PARLEY_EVENTS)[number];

/** Every name a webhook can subscribe to: the union of the reference's lists and Parley's own, subscription list first. */
export const EVENT_NAMES: readonly EventName[] = [...new Set<EventName>([...SUBSCRIPTION_EVENTS, ...GUIDE_EVENTS, ...PARLEY_EVENTS])];

/** Subscribes to every event (delivered under the subscription list's names). */
export const ALL_EVENTS = "*";

/**
 * Names that denote the same event as another name: `call.initiated` is `call.started`
 * under the guide's name. A webhook receives such an event under the name it subscribed to.
 */
export const EVENT_ALIASES: Readonly<Partial<Record<EventName, EventName>>> = { "call.initiated": "call.started" };

export function isEventName(value: string): value is EventName {
  return (EVENT_NAMES as readonly string[]).includes(value);
}
