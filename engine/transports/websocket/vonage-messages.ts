import { parseJsonObject } from "./json-object.js";

/**
 * Vonage Voice API WebSocket wire messages (NCCO `connect` to a `websocket` endpoint): audio
 * both ways as binary 16-bit little-endian linear PCM, 20 ms a message; control as JSON text.
 */

/** The sample rates Parley accepts from a `content-type` of `audio/l16;rate=N`. */
export const VONAGE_RATES = [8000, 16000] as const;
/** Bounds on the headers echoed in `websocket:connected`: they are Parley's own, so a few short values. */
export const MAX_VONAGE_HEADERS = 32;
export const MAX_VONAGE_HEADER_NAME = 256;
export const MAX_VONAGE_HEADER_VALUE = 4096;
/** Longest mark name read back from a `websocket:notify` (Parley's are `turn-N`). */
export const MAX_VONAGE_MARK_NAME = 256;

/** The first message, `websocket:connected`: the stream's format and the NCCO's headers. */
export interface VonageStartInfo {
  contentType: string;
  sampleRate: 8000 | 16000;
  /** The other string fields of the message: the `headers` given in the NCCO's endpoint. */
  headers: Record<string, string>;
}

export type VonageInbound = { event: "websocket:dtmf"; digit: string } | { event: "websocket:notify"; name: string };

export type VonageOutbound = { action: "clear" } | { action: "notify"; payload: { name: string } };

const L16 = /^audio\/l16\s*;\s*rate=(\d{1,6})$/i;

/**
 * Parses the first text message; a string saying why when it is not a `websocket:connected`
 * Parley accepts (not JSON, another event, a content-type other than L16 at 8 or 16 kHz, too many
 * or too long headers). Non-string fields are ignored.
 */
export function parseVonageConnected(text: string): VonageStartInfo | string {
  const value = parseJsonObject(text);
  if (value?.event !== "websocket:connected") return "the first message is not websocket:connected";
  const contentType = value["content-type"];
  if (typeof contentType !== "string") return "websocket:connected has no content-type";
  const rate = Number(L16.exec(contentType.trim())?.[1]);
  if (!(VONAGE_RATES as readonly number[]).includes(rate)) return `unsupported content-type ${JSON.stringify(contentType.slice(0, 64))}: audio/l16 at 8000 or 16000 Hz only`;
  const entries: [string, string][] = [];
  for (const [key, field] of Object.entries(value)) {
    if (key === "event" || key === "content-type" || typeof field !== "string") continue;
    if (entries.length === MAX_VONAGE_HEADERS) return `more than ${MAX_VONAGE_HEADERS} headers`;
    if (key.length > MAX_VONAGE_HEADER_NAME) return `a header name longer than ${MAX_VONAGE_HEADER_NAME} characters`;
    if (field.length > MAX_VONAGE_HEADER_VALUE) return `header ${key.slice(0, 64)} longer than ${MAX_VONAGE_HEADER_VALUE} characters`;
    entries.push([key, field]);
  }
  // fromEntries defines own properties: a "__proto__" header stays a header, not a prototype.
  return { contentType, sampleRate: rate as 8000 | 16000, headers: Object.fromEntries(entries) };
}

/** Parses a text message after the first; null for events this adapter ignores or malformed ones. */
export function parseVonageMessage(text: string): VonageInbound | null {
  const value = parseJsonObject(text);
  switch (value?.event) {
    case "websocket:dtmf":
      return typeof value.digit === "string" && /^[0-9*#A-D]$/.test(value.digit) ? { event: "websocket:dtmf", digit: value.digit } : null;
    case "websocket:notify": {
      const payload = value.payload;
      const name = payload !== null && typeof payload === "object" ? (payload as Record<string, unknown>).name : undefined;
      return typeof name === "string" && name.length <= MAX_VONAGE_MARK_NAME ? { event: "websocket:notify", name } : null;
    }
    default:
      // websocket:cleared, websocket:error and anything newer: nothing to act on.
      return null;
  }
}
