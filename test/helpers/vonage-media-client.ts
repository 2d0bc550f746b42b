import WebSocket from "ws";
import { bytesToPcm16, pcm16ToBytes } from "../../engine/audio/pcm16.js";
import { clientNow, MediaClient } from "../../scripts/bench/media-caller.js";

/**
 * Vonage's media server on a `connect` action's websocket endpoint, as the application sees it:
 * the first message is text, `{"event":"websocket:connected","content-type":...}` with the
 * endpoint's `headers` spread into it; then binary frames of 16-bit little-endian linear PCM,
 * 20 ms each (640 bytes at 16 kHz). What the application sends back is collected: binary audio
 * in `audio`, text messages in `messages`. Its `{"action":"clear"}` is acknowledged with
 * `{"event":"websocket:cleared"}` and its `{"action":"notify","payload":...}` answered with
 * `{"event":"websocket:notify","payload":...}` (at once: nothing is played out here, so the audio
 * queued before it has always "finished"). The far end hanging up closes the socket (1000).
 */
export class VonageMediaClient extends MediaClient {
  /** The first text message, as sent. */
  readonly connected: Record<string, unknown>;

  private constructor(ws: WebSocket, sampleRate: number, connected: Record<string, unknown>) {
    super(ws, sampleRate);
    this.connected = connected;
  }

  /**
   * Opens the socket to `url` (loopback: the caller rewrites public URLs) with the upgrade
   * `upgradeHeaders` (an endpoint's `authorization`), then sends `websocket:connected`.
   * Rejects with `status` when the upgrade is refused.
   */
  static connect(url: string, options: { contentType?: string; headers?: Record<string, unknown>; upgradeHeaders?: Record<string, string> } = {}): Promise<VonageMediaClient> {
    const contentType = options.contentType ?? "audio/l16;rate=16000";
    const sampleRate = l16Rate(contentType);
    const connected = { event: "websocket:connected", "content-type": contentType, ...(options.headers ?? {}) };
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: options.upgradeHeaders ?? {} });
      const client = new VonageMediaClient(ws, sampleRate, connected);
      ws.on("message", (data, isBinary) => {
        if (isBinary) return client.receiveAudio(bytesToPcm16(new Uint8Array(data as Buffer)));
        const text = data.toString();
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          message = { unparsed: text };
        }
        client.record(message);
        const action = (message as { action?: unknown }).action;
        if (action === "clear") client.sendText({ event: "websocket:cleared" });
        if (action === "notify") client.sendText({ event: "websocket:notify", payload: (message as { payload?: unknown }).payload });
      });
      ws.once("open", () => {
        client.openedAt = clientNow();
        ws.send(JSON.stringify(connected));
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

  /** Text messages the application sent with this `action` (clear, notify), in order. */
  actions(action: string): Array<Record<string, unknown>> {
    return this.messages.map((m) => m.message).filter((m) => m?.action === action);
  }

  /** Sends a text message as Vonage's side does (events: `websocket:dtmf`, ...). */
  sendText(message: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  protected sendFrame(samples: Int16Array): void {
    this.ws.send(pcm16ToBytes(samples), { binary: true });
  }

  sendDtmf(digit: string): void {
    this.sendText({ event: "websocket:dtmf", digit, duration: 260 });
  }

  /** Vonage ends the leg by closing the socket (normal closure); there is no goodbye message. */
  hangUp(): void {
    this.stopPump();
    this.ws.close(1000);
  }
}

/** The sample rate of an `audio/l16;rate=N` content type (8000, 16000 or 24000, as Vonage offers). */
export function l16Rate(contentType: string): number {
  const m = /^audio\/l16\s*;\s*rate=(8000|16000|24000)$/i.exec(contentType.trim());
  if (!m) throw new Error(`Vonage streams audio/l16;rate=8000|16000|24000, not ${contentType}`);
  return Number(m[1]);
}
