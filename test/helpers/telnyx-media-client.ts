import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { decodeAlaw, encodeAlaw } from "../../engine/audio/alaw.js";
import { decodeMulaw, encodeMulaw } from "../../engine/audio/mulaw.js";
import { clientNow, MediaClient } from "../../scripts/bench/media-caller.js";

/**
 * Telnyx's media server on a Call Control `stream_url`, as the application sees it (the AsyncAPI
 * "Stream call media over WebSocket", developers.telnyx.com/api-reference/websockets): JSON text
 * frames, `connected` (with the stream auth token, when the call has one, also sent as the
 * `x-telnyx-streaming-auth-token` upgrade header), then `start` (`stream_id`; `start` holding
 * `call_control_id`, `call_session_id`, `from`, `to`, `client_state`, `media_format`), `media`
 * frames of 20 ms (base64 RTP payloads without headers, PCMU or PCMA at 8 kHz, track `inbound`),
 * `dtmf`, and `stop` when the stream ends. What the application sends back is collected: `media`
 * payloads decoded into `audio`, every other message in `messages`; a `mark` is sent back at once
 * (nothing is played out here, so the media before it has always "finished").
 */

/** The codecs this client speaks: G.711 at 8 kHz, as Telnyx streams a PSTN call by default. */
export type TelnyxStreamEncoding = "PCMU" | "PCMA";

/** What identifies the stream and its call in `start`. */
export interface TelnyxStreamIdentity {
  callControlId: string;
  callSessionId?: string;
  /** The Telnyx account (`user_id`). */
  userId?: string;
  streamId?: string;
  from?: string | null;
  to?: string | null;
  clientState?: string | null;
  /** `start.custom_parameters` (TeXML `<Parameter>`s); absent from a Call Control stream unless given. */
  customParameters?: Record<string, string>;
  encoding?: TelnyxStreamEncoding;
  /** The call's `stream_auth_token`: sent as the upgrade header and in `connected`. */
  authToken?: string;
}

export class TelnyxMediaClient extends MediaClient {
  readonly streamId: string;
  readonly callControlId: string;
  readonly userId: string;
  readonly encoding: TelnyxStreamEncoding;
  private sequence = 0;
  private chunk = 0;

  private constructor(ws: WebSocket, identity: TelnyxStreamIdentity) {
    super(ws, 8000);
    this.streamId = identity.streamId ?? randomUUID();
    this.callControlId = identity.callControlId;
    this.userId = identity.userId ?? randomUUID();
    this.encoding = identity.encoding ?? "PCMU";
  }

  /**
   * Opens the socket to `url` (loopback: the caller rewrites public URLs), then sends `connected`
   * and `start`. Rejects with `status` and `body` when the upgrade is refused.
   */
  static connect(url: string, identity: TelnyxStreamIdentity): Promise<TelnyxMediaClient> {
    const headers: Record<string, string> = identity.authToken ? { "x-telnyx-streaming-auth-token": identity.authToken } : {};
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const client = new TelnyxMediaClient(ws, identity);
      ws.on("message", (data, isBinary) => {
        if (isBinary) return client.record({ binary: (data as Buffer).length });
        let message: any;
        try {
          message = JSON.parse(data.toString());
        } catch {
          return client.record({ unparsed: data.toString() });
        }
        if (message?.event === "media" && typeof message.media?.payload === "string") {
          const bytes = new Uint8Array(Buffer.from(message.media.payload, "base64"));
          return client.receiveAudio(client.encoding === "PCMA" ? decodeAlaw(bytes) : decodeMulaw(bytes));
        }
        client.record(message);
        if (message?.event === "mark") client.send({ event: "mark", stream_id: client.streamId, mark: { name: message.mark?.name } });
      });
      ws.once("open", () => {
        client.openedAt = clientNow();
        client.sendRaw({ event: "connected", version: "1.0.0", ...(identity.authToken ? { connected: { "x-telnyx-streaming-auth-token": identity.authToken } } : {}) });
        client.send({
          event: "start",
          stream_id: client.streamId,
          start: {
            user_id: client.userId,
            call_control_id: client.callControlId,
            call_session_id: identity.callSessionId ?? randomUUID(),
            from: identity.from ?? null,
            to: identity.to ?? null,
            client_state: identity.clientState ?? null,
            ...(identity.customParameters ? { custom_parameters: identity.customParameters } : {}),
            media_format: { encoding: client.encoding, sample_rate: 8000, channels: 1 },
          },
        });
        resolve(client);
      });
      ws.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body })));
      });
      ws.once("error", reject);
    });
  }

  /** Messages the application sent with this `event` (mark, clear, ...), in order. */
  events(event: string): any[] {
    return this.messages.map((m) => m.message).filter((m) => m?.event === event);
  }

  /** A frame as Telnyx numbers them: `sequence_number` counts every frame after `connected`, as text. */
  send(message: Record<string, unknown>): void {
    this.sendRaw({ ...message, sequence_number: String(++this.sequence) });
  }

  private sendRaw(message: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  protected sendFrame(samples: Int16Array): void {
    this.chunk++;
    const payload = Buffer.from(this.encoding === "PCMA" ? encodeAlaw(samples) : encodeMulaw(samples)).toString("base64");
    this.send({ event: "media", stream_id: this.streamId, media: { track: "inbound", chunk: String(this.chunk), timestamp: String((this.chunk - 1) * 20), payload } });
  }

  sendDtmf(digit: string): void {
    this.send({ event: "dtmf", stream_id: this.streamId, occurred_at: new Date().toISOString(), dtmf: { digit } });
  }

  /** Sends `stop`, as Telnyx does when the stream ends (the call hung up, streaming_stop), and closes. */
  hangUp(): void {
    this.send({ event: "stop", stream_id: this.streamId, stop: { user_id: this.userId, call_control_id: this.callControlId } });
    this.close();
  }
}
