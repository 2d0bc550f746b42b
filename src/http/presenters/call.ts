import type { CallRecord } from "../../db/repositories/calls.js";

/** A call as list items (and `recent_calls`) show it. */
export function presentCallListItem(call: CallRecord) {
  return {
    id: call.id,
    status: call.status,
    direction: call.direction,
    phone_number: call.phone_number,
    from_number: call.from_number,
    agent_id: call.agent_id,
    duration: call.duration,
    metadata: call.metadata,
    created_at: call.created_at,
    ended_at: call.ended_at,
  };
}
