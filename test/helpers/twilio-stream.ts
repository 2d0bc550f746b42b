import { randomBytes } from "node:crypto";
import WebSocket from "ws";

/**
 * A raw Twilio Media Streams connection to `${wsBase}/media/twilio` that sends `connected` and a
 * `start` carrying the given fields (Twilio-shaped ids unless overridden): for refusals and
 * malformed starts, where TwilioMediaClient would expect a call.
 */
export async function twilioStart(
  wsBase: string,
  start: { customParameters: unknown; callSid?: string; streamSid?: string },
): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const streamSid = start.streamSid ?? "MZ" + randomBytes(16).toString("hex");
  const ws = new WebSocket(`${wsBase}/media/twilio`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
  ws.send(
    JSON.stringify({
      event: "start",
      sequenceNumber: "1",
      streamSid,
      start: {
        streamSid,
        accountSid: "AC" + "0".repeat(32),
        callSid: start.callSid ?? "CA" + randomBytes(16).toString("hex"),
        tracks: ["inbound"],
        customParameters: start.customParameters,
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      },
    }),
  );
  return { ws, closed };
}
