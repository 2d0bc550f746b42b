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

/** Parses one text frame; null when it is not a message this adapter understands. */
export function parseTwilioMessage(text: string): TwilioInbound | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  const event = (value as { event?: unknown }).event;
  switch (event) {
    case "connected":
    case "start":
    case "media":
    case "mark":
    case "dtmf":
    case "stop":
      return value as TwilioInbound;
    default:
      return null;
  }
}
