import { parseJsonObject } from "./json-object.js";

/**
 * Telnyx media streaming wire messages (Call Control `stream_url`, bidirectional mode `rtp`):
 * JSON text frames, audio as base64 RTP payloads without headers, in the codec `start` names.
 * Reference: developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket
 * (the AsyncAPI "media-streaming-websocket"): Telnyx sends `connected`, `start`, `media`,
 * `dtmf`, `mark`, `error` and `stop`; the application may send `media`, `mark` and `clear`.
 */

/** Bounds on what a `start` may carry; the endpoint's frame limit bounds the message as a whole too. */
export const TELNYX_MAX_ID_LENGTH = 256;
export const TELNYX_MAX_CUSTOM_PARAMETERS = 32;
export const TELNYX_MAX_PARAMETER_NAME_LENGTH = 64;
/** As long as the longest value Parley reads from a stream's parameters (a 4,096-character context). */
export const TELNYX_MAX_PARAMETER_VALUE_LENGTH = 4096;
/** `client_state` is base64 of what Parley set on the call: its own small token or state. */
export const TELNYX_MAX_CLIENT_STATE_LENGTH = 4096;
/** A number or a SIP URI. */
export const TELNYX_MAX_ADDRESS_LENGTH = 256;
/** Base64 of 1.5 s of G.711 at 8 kHz: far more than one RTP chunk (Telnyx sends 20 ms ones). */
export const TELNYX_MAX_PAYLOAD_LENGTH = 16_000;
const MAX_ENCODING_LENGTH = 32;
const MAX_MARK_NAME_LENGTH = 1024;

/** What a stream's `start` says, checked and bounded. */
export interface TelnyxStartInfo {
  /** `stream_id` (a UUID). */
  streamId: string;
  /** `start.call_control_id`: the call's id in Call Control commands (hang-up, transfer). */
  callControlId: string;
  /** `start.media_format.encoding`, as Telnyx spells it (`PCMU`, `PCMA`, `G722`, `OPUS`, `L16` ...). */
  encoding: string;
  /** `start.media_format.sample_rate`, Hz. */
  sampleRate: number;
  /** `start.media_format.channels`. */
  channels: number;
  /** `start.custom_parameters`, every value a string; empty when there are none. */
  parameters: Record<string, string>;
  /** `start.client_state` (base64, as set on the call); null when absent. */
  clientState: string | null;
  /** `start.from` / `start.to` as Telnyx sends them (unchecked numbers or SIP URIs); null when absent. */
  from: string | null;
  to: string | null;
}

export type TelnyxInbound =
  | { event: "connected" }
  | { event: "start"; start: TelnyxStartInfo }
  | { event: "media"; media: { payload: string; track: string | undefined } }
  | { event: "dtmf"; dtmf: { digit: string } }
  | { event: "mark"; mark: { name: string } }
  | { event: "stop" };

export type TelnyxOutbound = { event: "media"; media: { payload: string } } | { event: "mark"; mark: { name: string } } | { event: "clear" };

/** Standard padded base64: Node decodes leniently (skipping what is not base64), so anything else is dropped, never played. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Ids are printable ASCII without spaces (a UUID, `v3:` and base64url): safe in logs and metadata. */
const ID = new RegExp(`^[\\x21-\\x7e]{1,${TELNYX_MAX_ID_LENGTH}}$`);
const DIGIT = /^[0-9*#A-D]$/;
/** Printable text without control characters, for the free-form fields kept (addresses, client_state). */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Parses one text frame; undefined when it is not a message this adapter understands (never throws). */
export function parseTelnyxMessage(text: string): TelnyxInbound | undefined {
  const value = parseJsonObject(text);
  if (!value) return undefined;
  switch (value.event) {
    case "connected":
      return { event: "connected" };
    case "stop":
      return { event: "stop" };
    case "start": {
      const start = parseStart(value);
      return start && { event: "start", start };
    }
    case "media": {
      const media = objectAt(value, "media");
      const payload = media?.payload;
      const track = media?.track;
      if (typeof payload !== "string" || payload.length > TELNYX_MAX_PAYLOAD_LENGTH || !BASE64.test(payload)) return undefined;
      if (track !== undefined && typeof track !== "string") return undefined;
      return { event: "media", media: { payload, track } };
    }
    case "dtmf": {
      const digit = objectAt(value, "dtmf")?.digit;
      return typeof digit === "string" && DIGIT.test(digit) ? { event: "dtmf", dtmf: { digit } } : undefined;
    }
    case "mark": {
      const name = objectAt(value, "mark")?.name;
      return typeof name === "string" && name.length <= MAX_MARK_NAME_LENGTH ? { event: "mark", mark: { name } } : undefined;
    }
    default:
      return undefined;
  }
}

function parseStart(value: Record<string, unknown>): TelnyxStartInfo | undefined {
  const start = objectAt(value, "start");
  const format = start && objectAt(start, "media_format");
  if (!start || !format) return undefined;
  const streamId = value.stream_id;
  const callControlId = start.call_control_id;
  if (typeof streamId !== "string" || !ID.test(streamId)) return undefined;
  if (typeof callControlId !== "string" || !ID.test(callControlId)) return undefined;
  const { encoding, sample_rate: sampleRate, channels } = format;
  if (typeof encoding !== "string" || encoding.length === 0 || encoding.length > MAX_ENCODING_LENGTH || CONTROL.test(encoding)) return undefined;
  if (!isIntegerIn(sampleRate, 1, 192_000) || !isIntegerIn(channels ?? 1, 1, 8)) return undefined;
  const parameters = parseParameters(start.custom_parameters);
  const clientState = optionalText(start.client_state, TELNYX_MAX_CLIENT_STATE_LENGTH);
  const from = optionalText(start.from, TELNYX_MAX_ADDRESS_LENGTH);
  const to = optionalText(start.to, TELNYX_MAX_ADDRESS_LENGTH);
  if (!parameters || clientState === undefined || from === undefined || to === undefined) return undefined;
  return { streamId, callControlId, encoding, sampleRate: sampleRate as number, channels: (channels ?? 1) as number, parameters, clientState, from, to };
}

/** `custom_parameters`: absent (none), or an object of at most 32 bounded string values; undefined otherwise. */
function parseParameters(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length > TELNYX_MAX_CUSTOM_PARAMETERS) return undefined;
  for (const [name, v] of entries) {
    if (name.length === 0 || name.length > TELNYX_MAX_PARAMETER_NAME_LENGTH) return undefined;
    if (typeof v !== "string" || v.length > TELNYX_MAX_PARAMETER_VALUE_LENGTH) return undefined;
  }
  // A null prototype: a parameter named `__proto__` or `constructor` stays a plain entry.
  return Object.assign(Object.create(null) as Record<string, string>, Object.fromEntries(entries));
}

/** A bounded string without control characters; null when absent; undefined when malformed. */
function optionalText(value: unknown, maxLength: number): string | null | undefined {
  if (value === undefined || value === null) return null;
  return typeof value === "string" && value.length <= maxLength && !CONTROL.test(value) ? value : undefined;
}

function objectAt(value: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const part = value[key];
  return part !== null && typeof part === "object" && !Array.isArray(part) ? (part as Record<string, unknown>) : undefined;
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}
