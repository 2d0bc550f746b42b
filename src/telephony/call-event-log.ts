import type { Logger } from "pino";
import type { CallEvent } from "../../engine/index.js";

/** A stage's length in ms (0 when it overlapped the one before), or null when one of its ends did not happen. */
function span(from: number | null, to: number | null): number | null {
  return from === null || to === null ? null : Math.max(0, Math.round(to - from));
}

/**
 * Logs one line per event of a live call's session (message `call event`, the call's
 * `call_id` and `account_id` from `log`'s bindings, `event` naming it). What the caller or
 * the agent said never goes in (personal data): a transcript segment is logged by its role
 * and length, a barge-in without the words heard, a tool call without its arguments, a key
 * press without its digit. The level says how often it comes: a turn, a barge-in, a tool, a
 * transfer, a hand-off, a supervisor's action, the recording and the end at info; state changes, transcript segments, early
 * replies and key presses at debug; partial transcripts at trace; errors at warn.
 */
export function logCallEvent(log: Logger, event: CallEvent): void {
  switch (event.type) {
    case "state":
      return log.debug({ event: "call.state", state: event.state }, "call event");
    case "partial_transcript":
      return log.trace({ event: "call.partial_transcript", chars: event.text.length }, "call event");
    case "transcript":
      return log.debug({ event: "call.transcript_segment", role: event.segment.role, at_s: event.segment.timestamp, chars: event.segment.content.length }, "call event");
    case "interruption":
      return log.info({ event: "call.barge_in", turn_id: event.turnId, played_ms: event.playedMs }, "call event");
    case "turn_metrics": {
      const m = event.metrics;
      return log.info(
        {
          event: "call.turn",
          turn_id: m.turnId,
          endpointing_ms: span(m.endOfSpeechAt, m.endpointAt),
          asr_ms: span(m.endpointAt, m.asrFinalAt),
          first_token_ms: span(m.asrFinalAt ?? m.endpointAt, m.firstTokenAt),
          first_audio_ms: span(m.firstTokenAt, m.firstTtsAudioAt),
          voice_to_voice_ms: m.voiceToVoiceMs === null ? null : Math.round(m.voiceToVoiceMs),
          interrupted: m.interrupted,
        },
        "call event",
      );
    }
    case "early_reply":
      return log.debug({ event: "call.early_reply", used: event.used }, "call event");
    case "tool_call":
      return log.info({ event: "call.tool", tool: event.name, ok: event.result.ok }, "call event");
    case "transfer":
      return log.info({ event: "call.transfer", transfer_number: event.number }, "call event");
    case "handoff":
      return log.info({ event: "call.handoff", from_agent_id: event.fromAgentId, to_agent_id: event.toAgentId }, "call event");
    case "dtmf":
      return log.debug({ event: "call.dtmf" }, "call event");
    case "supervisor":
      // What a supervisor had said or whispered is not logged (it may quote the caller): its kind and length.
      return log.info({ event: `call.supervisor_${event.action}`, chars: event.text.length }, "call event");
    case "recording":
      return log.info({ event: "call.recording", duration_ms: Math.round(event.durationMs) }, "call event");
    case "error":
      // Provider errors the call survived (recovered) are worth seeing too: a provider degrading.
      return log.warn({ event: "call.error", error: event.message, recovered: event.recovered }, "call event");
    case "ended":
      return log.info({ event: "call.ended", reason: event.reason, duration_ms: Math.round(event.durationMs), segments: event.transcript.length }, "call event");
  }
}
