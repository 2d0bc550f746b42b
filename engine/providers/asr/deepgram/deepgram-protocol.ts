/**
 * Deepgram's live streaming protocol (`/v1/listen` over WebSocket), the part Parley speaks:
 * the client sends audio as binary messages and control messages as JSON text; the server
 * answers with JSON text messages. Close frames carry errors (code and a reason such as
 * `NET-0001`); a failed handshake is an HTTP 4xx/5xx with a `dg-error` header.
 */

/** The client's control messages; each must go as a text frame. */
export const DEEPGRAM_CONTROL_TYPES = [
  /** Keeps an idle stream open (the server closes it after ~10 s without audio or KeepAlive). */
  "KeepAlive",
  /** Flushes the audio sent so far: its final results follow, the last with `from_finalize: true`. */
  "Finalize",
  /** Flushes, then the server sends `Metadata` and closes the socket. */
  "CloseStream",
] as const;

export type DeepgramControlType = (typeof DEEPGRAM_CONTROL_TYPES)[number];

export interface DeepgramControl {
  type: DeepgramControlType;
}

export interface DeepgramWord {
  word: string;
  /** Seconds from the start of the stream. */
  start: number;
  end: number;
  confidence: number;
  punctuated_word?: string;
}

export interface DeepgramAlternative {
  transcript: string;
  confidence: number;
  words: DeepgramWord[];
}

/**
 * A transcript of a stretch of the stream. Interim results (`is_final: false`) are revised by
 * later ones; a final result (`is_final: true`) is never revised, and the next result starts
 * where it ended.
 */
export interface DeepgramResults {
  type: "Results";
  /** `[channel, channels]`. */
  channel_index: number[];
  /** Seconds of audio the result covers, from `start` (seconds from the start of the stream). */
  duration: number;
  start: number;
  is_final: boolean;
  /** The server's own endpointing saw the speaker stop (always with `is_final`). */
  speech_final: boolean;
  /** The last result of a `Finalize`. */
  from_finalize?: boolean;
  channel: { alternatives: DeepgramAlternative[] };
  metadata?: { request_id: string; model_info?: { name: string; version: string; arch: string }; model_uuid?: string };
}

/** The summary sent after `CloseStream`, just before the server closes the socket. */
export interface DeepgramMetadata {
  type: "Metadata";
  transaction_key: string;
  request_id: string;
  sha256: string;
  /** ISO 8601. */
  created: string;
  /** Seconds of audio received. */
  duration: number;
  channels: number;
}

/** What the provider reads from a server message; everything else (Metadata, SpeechStarted, UtteranceEnd) is `other`. */
export type DeepgramServerEvent =
  | { type: "results"; transcript: string; isFinal: boolean; fromFinalize: boolean }
  | { type: "error"; message: string }
  | { type: "other" };

export function encodeControl(type: DeepgramControlType): string {
  return JSON.stringify({ type } satisfies DeepgramControl);
}

/** Reads one text message from the server; a message that is not JSON is an error. */
export function parseServerMessage(text: string): DeepgramServerEvent {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { type: "error", message: `the server sent a message that is not JSON: ${text.slice(0, 100)}` };
  }
  if (typeof message !== "object" || message === null) return { type: "other" };
  const fields = message as Record<string, unknown>;
  if (fields.type === "Results") {
    const results = message as Partial<DeepgramResults>;
    const transcript = results.channel?.alternatives?.[0]?.transcript;
    return {
      type: "results",
      transcript: typeof transcript === "string" ? transcript.trim() : "",
      isFinal: results.is_final === true,
      fromFinalize: results.from_finalize === true,
    };
  }
  if (fields.type === "Error") {
    const description = [fields.err_code, fields.err_msg, fields.description, fields.message].filter((part) => typeof part === "string");
    return { type: "error", message: description.join(": ") || "the server reported an error" };
  }
  return { type: "other" };
}
