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
  /** The transcript so far, in the order the segments started. */
  transcriptSoFar(): TranscriptSegment[];
}
