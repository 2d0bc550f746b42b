import type { Clock } from "../audio/clock.js";
import type { CallAction, CallEndReason, CallEvent, TranscriptSegment, TurnMetrics } from "../call-events.js";
import type { AsrProvider } from "../providers/asr/asr-provider.js";
import type { DialogueProvider } from "../providers/llm/dialogue-provider.js";
import type { TtsProvider } from "../providers/tts/tts-provider.js";
import type { ToolExecutor } from "../tools.js";
import type { MediaTransport } from "../transports/transport.js";
import type { TurnDetector } from "../turn/turn-detector.js";
import type { AgentSettings } from "../types.js";
import type { VadFactory } from "../vad/vad-factory.js";

/** What a call session is given, and what it gives back. */

export interface CallProviders {
  vad: VadFactory;
  asr: AsrProvider;
  dialogue: DialogueProvider;
  tts: TtsProvider;
  /**
   * Says the fallback line when a provider fails a turn: a TTS that needs no network (the
   * embedded Flite). It speaks in the agent's voice when it has it, else in its first voice.
   */
  fallbackTts: TtsProvider;
  /** Says greetings rendered before (by `tts`, kept per voice and sentence). Default: `tts`. */
  greetingTts?: TtsProvider;
}

export interface CallSessionOptions {
  callId: string;
  agent: AgentSettings;
  /** Values for `{{placeholders}}` and for the dialogue (customer name, purpose, ...). */
  context: Record<string, unknown>;
  transport: MediaTransport;
  providers: CallProviders;
  /** Where to write the stereo WAV recording; null when the call is not recorded. */
  recordingPath: string | null;
  maxDurationSec: number;
  /**
   * Silence on both sides (no caller speech, no agent audio) this long ends the call: the agent
   * says SILENCE_TIMEOUT_LINE and hangs up (`silence_timeout`). 0 or absent: never. A caller who
   * is gone, or a socket held open and mute, must not keep a recognizer and a slot for an hour.
   */
  silenceTimeoutMs?: number;
  /** Caller audio kept from before speech is detected, so the recognizer hears the first word whole. */
  preRollMs?: number;
  /** Drives pacing and metrics (tests use a fake one). */
  clock?: Clock;
  /** What the agent may do on this call (booking, transfer, ...), run by the control plane. Default: nothing. */
  tools?: ToolExecutor;
  /** Decides the caller's turns and barge-in. Default: the one of the agent's `endpointing_mode` (`turnDetectorFor`). */
  turnDetector?: TurnDetector;
}

export interface CallSessionEvents {
  event: (event: CallEvent) => void;
}

/** Everything a call produced, once it has ended. */
export interface CallSummary {
  reason: CallEndReason;
  durationMs: number;
  transcript: TranscriptSegment[];
  recording: { path: string; durationMs: number } | null;
  turns: TurnMetrics[];
  /** When the call started, on the clock of `turns`' timings. */
  startedAt: number;
  /** What the agent did, in order (tools and their results, answers, hand-off, its end decision). */
  actions: CallAction[];
}
