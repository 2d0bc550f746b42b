import type { CallEvent } from "../../call-events.js";
import { parseJsonObject } from "./json-object.js";

/**
 * Parley's native media protocol on `/media/ws`: binary frames carry audio (PCM16
 * little-endian at the negotiated rate, or one Opus packet per 20 ms frame), text frames carry
 * JSON control messages. Field names are snake_case like the REST API.
 */

export const NATIVE_FORMATS = ["pcm16", "opus"] as const;
export type NativeFormat = (typeof NATIVE_FORMATS)[number];

export const NATIVE_PCM_RATES = [8000, 16000, 24000, 48000] as const;
export const NATIVE_OPUS_RATES = [16000, 48000] as const;

/** Client to server. */
export type NativeClientMessage =
  | { type: "dtmf"; digit: string }
  | { type: "mark"; name: string }
  | { type: "hangup" };

/** Server to client. */
export type NativeServerMessage =
  | { type: "connected"; call_id: string; format: NativeFormat; sample_rate: number; frame_ms: number }
  | { type: "clear" }
  | { type: "mark"; name: string }
  | { type: "state"; state: string }
  | { type: "transcript"; role: string; content: string; timestamp: number }
  | { type: "partial_transcript"; text: string }
  | { type: "interruption"; turn_id: number; played_ms: number; heard_text: string }
  | { type: "turn_metrics"; [key: string]: unknown }
  | { type: "early_reply"; used: boolean }
  /** Without `arguments`, `data` and `error` on a browser call (see NativeTransportOptions.toolDetails). */
  | { type: "tool_call"; name: string; arguments?: Record<string, unknown>; ok: boolean; data?: Record<string, unknown>; error?: string }
  | { type: "transfer"; number: string | null }
  | { type: "handoff"; from_agent_id: string; to_agent_id: string; to_agent_name: string }
  | { type: "ended"; reason: string; duration_ms: number }
  /** The call was refused after the socket opened (instead of `connected`); the close follows. */
  | { type: "error"; code: string; message: string };

export function parseNativeClientMessage(text: string): NativeClientMessage | null {
  const m = parseJsonObject(text);
  if (!m) return null;
  if (m.type === "dtmf" && typeof m.digit === "string" && /^[0-9*#A-D]$/.test(m.digit)) return { type: "dtmf", digit: m.digit };
  if (m.type === "mark" && typeof m.name === "string") return { type: "mark", name: m.name };
  if (m.type === "hangup") return { type: "hangup" };
  return null;
}

/** The wire form of a call event; null for events the native protocol does not carry. */
export function toNativeMessage(event: CallEvent): NativeServerMessage | null {
  switch (event.type) {
    case "state":
      return { type: "state", state: event.state };
    case "transcript":
      return { type: "transcript", ...event.segment };
    case "partial_transcript":
      return { type: "partial_transcript", text: event.text };
    case "interruption":
      return { type: "interruption", turn_id: event.turnId, played_ms: event.playedMs, heard_text: event.heardText };
    case "early_reply":
      return { type: "early_reply", used: event.used };
    case "turn_metrics": {
      const m = event.metrics;
      return {
        type: "turn_metrics",
        turn_id: m.turnId,
        end_of_speech_at: m.endOfSpeechAt,
        endpoint_at: m.endpointAt,
        asr_final_at: m.asrFinalAt,
        first_token_at: m.firstTokenAt,
        first_tts_audio_at: m.firstTtsAudioAt,
        first_frame_sent_at: m.firstFrameSentAt,
        voice_to_voice_ms: m.voiceToVoiceMs,
        interrupted: m.interrupted,
      };
    }
    case "tool_call":
      return event.result.ok
        ? { type: "tool_call", name: event.name, arguments: event.arguments, ok: true, data: event.result.data }
        : { type: "tool_call", name: event.name, arguments: event.arguments, ok: false, error: event.result.error, ...(event.result.data ? { data: event.result.data } : {}) };
    case "transfer":
      return { type: "transfer", number: event.number };
    case "handoff":
      return { type: "handoff", from_agent_id: event.fromAgentId, to_agent_id: event.toAgentId, to_agent_name: event.toAgentName };
    case "ended":
      return { type: "ended", reason: event.reason, duration_ms: event.durationMs };
    default:
      return null;
  }
}
