import type { EventRecord } from "../../db/repositories/events.js";
import { readableEventData } from "../../services/event-content.js";

/**
 * A stored event: what its deliveries carry, under the event's own name, less the content
 * fields the reading key may not see (named in `withheld`, see event-content.ts).
 */
export function presentEvent(event: EventRecord, permissions: readonly string[]) {
  const { data, withheld } = readableEventData(event.name, event.data, permissions);
  return { id: event.id, event: event.name, sequence: event.seq, timestamp: event.created_at, call_id: event.call_id, data, withheld };
}
