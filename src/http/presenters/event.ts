import type { EventRecord } from "../../db/repositories/events.js";

/** A stored event: what its deliveries carry, under the event's own name. */
export function presentEvent(event: EventRecord) {
  return { id: event.id, event: event.name, sequence: event.seq, timestamp: event.created_at, call_id: event.call_id, data: event.data };
}
