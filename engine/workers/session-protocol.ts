/**
 * The messages between the main thread (where media sockets, HTTP and the database live) and a
 * session worker (where calls run: VAD hand-off, turn logic, recognition, dialogue, synthesis,
 * playout pacing, recording). Everything is structured-clone data; audio samples travel as
 * transferred buffers, never copied.
 */
import type { CallEndReason, CallEvent } from "../call-events.js";
import type { CallSummary } from "../call-session.js";
import type { EngineUsage } from "../engine.js";
import type { ProviderStage } from "../providers/provider-error.js";
import type { ProviderSwitch } from "../providers/provider-chain.js";
import type { ProviderRequest } from "../providers/provider-measurement.js";
import type { ToolDefinition, ToolResult } from "../tools.js";
import type { AgentSettings } from "../types.js";

/** What a worker needs to run one call, the transport and the tools aside. */
export interface CallSetup {
  callId: string;
  agent: AgentSettings;
  context: Record<string, unknown>;
  recordingPath: string | null;
  maxDurationSec: number;
  silenceTimeoutMs?: number;
  preRollMs?: number;
  /** The main thread's transport, as the session sees it. */
  transport: { protocol: string; inputSampleRate: number; outputSampleRate: number; closed: boolean; sendsDtmf: boolean };
  tools: readonly ToolDefinition[];
}

/** Main thread -> worker. */
export type ToWorker =
  | { type: "create"; setup: CallSetup }
  | { type: "start"; callId: string }
  | { type: "audio"; callId: string; samples: Int16Array; sampleRate: number }
  | { type: "dtmf"; callId: string; digit: string }
  | { type: "mark"; callId: string; name: string }
  | { type: "hangup"; callId: string; reason: string }
  | { type: "stop"; callId: string; reason: CallEndReason }
  | { type: "hang_up_with"; callId: string; line: string; reason: CallEndReason; withinMs: number }
  /** A supervisor's line for the agent to say, or guidance for its replies (checked on the main thread first). */
  | { type: "supervise"; callId: string; action: "say" | "whisper"; text: string }
  /** A supervisor takes the call over, or gives it back (see LiveCall.takeOver). */
  | { type: "take_over"; callId: string; on: boolean }
  /** A tool's result, or the message of the error it threw. */
  | { type: "tool_result"; callId: string; requestId: number; result: ToolResult | null; error: string | null }
  | { type: "dtmf_sent"; callId: string; requestId: number; error: string | null }
  | { type: "prepare_greeting"; requestId: number; agent: AgentSettings; context: Record<string, unknown> }
  | { type: "cancel_greeting"; requestId: number }
  | { type: "close" };

/** Worker -> main thread. */
export type FromWorker =
  | { type: "ready" }
  | { type: "failed_to_load"; message: string }
  | { type: "started"; callId: string; error: { name: string; message: string } | null }
  | { type: "event"; callId: string; event: CallEvent }
  | { type: "ended"; callId: string; summary: CallSummary }
  | { type: "audio_out"; callId: string; samples: Int16Array; sampleRate: number }
  | { type: "clear"; callId: string }
  | { type: "mark_out"; callId: string; name: string }
  | { type: "send_dtmf"; callId: string; requestId: number; digits: string }
  | { type: "close_transport"; callId: string; reason: string }
  | { type: "tool"; callId: string; requestId: number; name: string; args: Record<string, unknown> }
  | { type: "tool_abort"; callId: string; requestId: number }
  | { type: "greeting_prepared"; requestId: number }
  | { type: "provider_retry"; stage: ProviderStage; provider: string }
  | ({ type: "provider_switch" } & ProviderSwitch)
  | ({ type: "provider_request" } & ProviderRequest)
  | { type: "usage"; usage: EngineUsage }
  | { type: "closed" };
