import { parseJsonObject } from "./json-object.js";

/**
 * Twilio Media Streams wire messages (bidirectional streams): JSON text frames, audio as
 * base64 mu-law 8 kHz mono.
 */

export interface TwilioStartInfo {
  streamSid: string;
  accountSid: string;
  callSid: string;
  tracks: string[];
  customParameters: Record<string, string>;
  mediaFormat: { encoding: string; sampleRate: number; channels: number };
}

export type TwilioInbound =
  | { event: "connected"; protocol: string; version: string }
  | { event: "start"; sequenceNumber: string; start: TwilioStartInfo; streamSid: string }
  | { event: "media"; sequenceNumber: string; media: { track: string; chunk: string; timestamp: string; payload: string }; streamSid: string }
  | { event: "mark"; sequenceNumber: string; mark: { name: string }; streamSid: string }
  | { event: "dtmf"; sequenceNumber: string; dtmf: { track: string; digit: string }; streamSid: string }
  | { event: "stop"; sequenceNumber: string; stop: { accountSid: string; callSid: string }; streamSid: string };

export type TwilioOutbound =
  | { event: "media"; streamSid: string; media: { payload: string } }
  | { event: "mark"; streamSid: string; mark: { name: string } }
  | { event: "clear"; streamSid: string };

/** Standard base64 (what Twilio sends), padded: anything else is not decoded into audio. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Parses one text frame; null when it is not a message this adapter understands. */
export function parseTwilioMessage(text: string): TwilioInbound | null {
  const value = parseJsonObject(text);
  const part = (key: string) => (value?.[key] !== null && typeof value?.[key] === "object" ? (value[key] as Record<string, unknown>) : undefined);
  // The fields the adapter reads are checked here, so a malformed frame is dropped, never thrown.
  switch (value?.event) {
    case "connected":
    case "stop":
      return value as unknown as TwilioInbound;
    case "start":
      return typeof part("start")?.streamSid === "string" ? (value as unknown as TwilioInbound) : null;
    case "media":
      // Node decodes base64 leniently (skipping what is not base64): a payload that is not clean
      // base64 would become arbitrary audio, so it is dropped like any malformed frame.
      return typeof part("media")?.payload === "string" && BASE64.test(part("media")!.payload as string) ? (value as unknown as TwilioInbound) : null;
    case "mark":
      return typeof part("mark")?.name === "string" ? (value as unknown as TwilioInbound) : null;
    case "dtmf":
      return typeof part("dtmf")?.digit === "string" ? (value as unknown as TwilioInbound) : null;
    default:
      return null;
  }
}
