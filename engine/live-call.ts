import type { EventEmitter } from "eventemitter3";
import type { CallEndReason, CallEvent, TranscriptSegment } from "./call-events.js";
import type { CallSummary } from "./call-session.js";
import type { ToolExecutor } from "./tools.js";
import type { MediaTransport } from "./transports/transport.js";
import type { AgentSettings } from "./types.js";

/** What the control plane gives the engine to run one call. */
export interface LiveCallOptions {
  callId: string;
  agent: AgentSettings;
  /** Values for `{{placeholders}}` and for the dialogue (customer name, purpose, ...). */
  context: Record<string, unknown>;
  transport: MediaTransport;
  /** Where to write the stereo WAV recording; null when the call is not recorded. */
  recordingPath: string | null;
  maxDurationSec: number;
  /** Silence on both sides this long ends the call (see CallSessionOptions). */
  silenceTimeoutMs?: number;
  /** Caller audio kept from before speech is detected. */
  preRollMs?: number;
  /** What the agent may do on this call, run by the control plane (on its own thread). */
  tools?: ToolExecutor;
}

/**
 * One call as the control plane holds it, wherever it runs (a session worker, or this thread):
 * nothing runs until `start()`; `stop()` or the far end ends it and resolves `ended`.
 */
export interface LiveCall extends EventEmitter<{ event: (event: CallEvent) => void }> {
  /** Resolves once the call has ended and everything is released. */
  readonly ended: Promise<CallSummary>;
  /** Opens the providers, speaks the greeting and starts listening; rejects when the call cannot start. */
  start(): Promise<void>;
  /** Ends the call (idempotent); resolves with what it produced. */
  stop(reason?: CallEndReason): Promise<CallSummary>;
  /** Cuts the agent, says `line`, then ends the call with `reason` (at the latest after `withinMs`). */
  hangUpWith(line: string, reason: CallEndReason, withinMs: number): Promise<CallSummary>;
  /**
   * A supervisor has the agent say `text` (trimmed), in its voice, as its next turn: at once
   * when it is listening; after the turn it is saying (not cutting it); after the caller's turn
   * when the caller is speaking, and before the dialogue's reply to that turn. It goes in the
   * transcript and the dialogue's history as the agent's words (what was heard of it if the
   * caller interrupts). Throws a RangeError when `text` is empty or over 1000 characters (see
   * `supervisorText`); a no-op once the call is ending.
   */
  say(text: string): void;
  /**
   * A supervisor's guidance for the agent's next replies, never spoken: a chat model has it in
   * its instructions for the rest of the call (the rules dialogue cannot follow free text and
   * ignores it). Same checks as `say`; a no-op once the call is ending.
   */
  whisper(text: string): void;
  /**
   * A supervisor takes the call over: the agent stops at once and answers nothing (the caller's
   * words are still transcribed) until `handBack`, which tells the dialogue what the caller said
   * meanwhile. The supervisor's audio is the control plane's to send. No-ops once the call ends.
   */
  takeOver(): void;
  handBack(): void;
  /** The transcript so far, in the order the segments started. */
  transcriptSoFar(): TranscriptSegment[];
}
