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

/** What POST /v1/calls answers: the reference's creation fields plus `direction`. */
export function presentCallCreated(call: CallRecord) {
  const { duration: _duration, ended_at: _endedAt, ...created } = presentCallListItem(call);
  return { ...created, record: call.record };
}

/**
 * The call object of GET /v1/calls/{id}; `include=` adds the optional parts (`recordingUrl`
 * makes the signed link that `include=recording` hands out).
 */
export function presentCall(
  call: CallRecord,
  include: ReadonlySet<"transcript" | "recording" | "analysis">,
  recordingUrl: (call: CallRecord) => string | null = () => null,
) {
  return {
    ...presentCallListItem(call),
    record: call.record,
    max_duration: call.max_duration,
    answered_at: call.answered_at,
    ...(include.has("transcript") ? { transcript: call.transcript ?? [] } : {}),
    ...(include.has("recording") ? { recording_url: recordingUrl(call) } : {}),
    ...(include.has("analysis") ? { analysis: call.analysis } : {}),
  };
}
