import type { CallAction } from "../../../engine/index.js";
import type { CallRecord } from "../../db/repositories/calls.js";

/** What `include=` can add to a call (see getCallQuery). */
export type CallInclude = "transcript" | "recording" | "analysis" | "latency" | "tool_calls";

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
  include: ReadonlySet<CallInclude>,
  recordingUrl: (call: CallRecord) => string | null = () => null,
) {
  return {
    ...presentCallListItem(call),
    record: call.record,
    max_duration: call.max_duration,
    answered_at: call.answered_at,
    ...(include.has("transcript") ? { transcript: call.transcript ?? [] } : {}),
    ...(include.has("recording") ? { recording_url: recordingUrl(call) } : {}),
    // While a model writes it, the analysis is not final: null until it is stored (its end events come with it).
    ...(include.has("analysis") ? { analysis: call.analysis_pending ? null : call.analysis } : {}),
    ...(include.has("latency") ? { latency: call.latency } : {}),
    ...(include.has("tool_calls") ? { tool_calls: presentToolCalls(call.actions) } : {}),
  };
}

/**
 * The tool calls among a call's stored actions, in the order run. Only what was asked and
 * answered: a result's `then` (the transfer or end it asked for) is the call's own business,
 * seen in its status and end reason.
 */
export function presentToolCalls(actions: readonly CallAction[] | null) {
  return (actions ?? []).flatMap((action) =>
    action.type === "tool_call"
      ? [
          {
            name: action.name,
            // Rows written before a field was kept may lack it: null rather than absent.
            arguments: action.arguments ?? {},
            ok: action.result.ok,
            data: action.result.data ?? null,
            error: action.result.ok ? null : (action.result.error ?? null),
          },
        ]
      : [],
  );
}
