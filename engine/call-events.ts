/** Everything a call session reports, as one typed union (the control plane stores them). */
import type { ProviderStage } from "./providers/provider-error.js";
import type { ToolResult } from "./tools.js";

export interface TranscriptSegment {
  role: "agent" | "user";
  content: string;
  /** Seconds from call start. */
  timestamp: number;
  /**
   * On an agent's segment said after a hand-off: the agent that said it (the call's first
   * agent's segments have none). Named as the API shows it.
   */
  agent_id?: string;
}

/** One agent turn's timings: ms on the server's monotonic clock at each stage; null when it did not happen. */
export interface TurnMetrics {
  turnId: number;
  /** When the caller's speech ended (the last voiced frame arrived). Null for the greeting. */
  endOfSpeechAt: number | null;
  /** When the silence reached `endpointing_ms` (the turn was taken). */
  endpointAt: number | null;
  asrFinalAt: number | null;
  firstTokenAt: number | null;
  firstTtsAudioAt: number | null;
  firstFrameSentAt: number | null;
  /** First frame sent minus end of caller speech (greeting: minus connection). */
  voiceToVoiceMs: number | null;
  /** The caller cut the turn short (barge-in). */
  interrupted: boolean;
}

/**
 * Something the agent did on the call, in order, for the call's analysis: a tool it used (with
 * what it came to), a question it answered, a callback it agreed to, a hand-off, or the end it
 * decided on (the dialogue's own reason, e.g. `caller_goodbye`, `not_interested`).
 */
export type CallAction =
  | { type: "tool_call"; name: string; arguments: Record<string, unknown>; result: ToolResult }
  /** `passage_id`: the knowledge-base passage the answer came from (absent for an FAQ answer). */
  | { type: "answered_question"; question: string; passage_id?: string }
  | { type: "callback_requested"; date: string | null; time: string | null }
  | { type: "transfer" }
  /** The caller was passed to another agent (`agentId`). */
  | { type: "handoff"; agentId: string }
  | { type: "end_call"; reason: string };

export const CALL_END_REASONS = [
  "caller_hangup",
  "end_call_phrase",
  "agent_ended",
  /** The dialogue left a message on an answering machine and hung up. */
  "voicemail",
  /** The callee asked not to be called again; the agent confirmed and hung up. */
  "do_not_call",
  "transferred",
  "max_duration",
  /** Nobody spoke for the session's silence timeout: the agent said goodbye and hung up. */
  "silence_timeout",
  /** The control plane ended the call because the account's credit ran out (after a goodbye). */
  "credit_exhausted",
  "stopped",
  "error",
  /** The caller's audio ran ahead of the wall clock (see CallerInputBudget): a client flooding the engine. */
  "audio_overrun",
  /** The caller's client stopped reading what it was sent (a media WebSocket): it was cut off. */
  "client_not_reading",
] as const;
export type CallEndReason = (typeof CALL_END_REASONS)[number];

export type CallState = "connecting" | "listening" | "thinking" | "speaking" | "ended";

export type CallEvent =
  | { type: "state"; state: CallState }
  | { type: "transcript"; segment: TranscriptSegment }
  | { type: "partial_transcript"; text: string }
  | { type: "interruption"; turnId: number; playedMs: number; heardText: string }
  | { type: "turn_metrics"; metrics: TurnMetrics }
  /**
   * A reply prepared before the caller's turn was over (see `endpointing_mode` adaptive): `used`
   * when the turn ended with those words and it was said, false when the caller went on and it
   * was dropped unheard.
   */
  | { type: "early_reply"; used: boolean }
  /** A tool the agent used, with what it came to. */
  | { type: "tool_call"; name: string; arguments: Record<string, unknown>; result: ToolResult }
  | { type: "transfer"; number: string | null }
  /** Another agent took the call over: its voice, prompt and tools from the next word on. */
  | { type: "handoff"; fromAgentId: string; toAgentId: string; toAgentName: string }
  | { type: "dtmf"; digit: string }
  /**
   * A supervisor's line carried out (see LiveCall.say and LiveCall.whisper): `say` as the agent
   * starts saying it (its turn begins), `whisper` as the dialogue takes it in. For the control
   * plane only: never sent to the caller's client (a whisper is the agent's secret).
   */
  | { type: "supervisor"; action: "say" | "whisper" | "takeover" | "handback"; text: string }
  | { type: "recording"; path: string; durationMs: number }
  /**
   * Writing the recording failed (a full disk: `code` ENOSPC, EFBIG, EIO, ...; null when the
   * error had none): the recording stopped and its file was deleted; the call goes on, and its
   * summary has no recording. Once per call at most.
   */
  | { type: "recording_failed"; message: string; code: string | null }
  /**
   * `recovered`: the call went on (a provider failed a turn and the agent said its fallback
   * line) or was ending anyway (a lost recording); false when the error ended the call with
   * reason `error`. `provider` names the speech or language provider that failed (absent when
   * the error is not a provider's: a transport fault, dropped audio, a bug).
   */
  | { type: "error"; message: string; recovered: boolean; provider?: { stage: ProviderStage; name: string } }
  | { type: "ended"; reason: CallEndReason; durationMs: number; transcript: TranscriptSegment[] };
