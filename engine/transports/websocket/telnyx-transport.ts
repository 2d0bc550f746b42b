import type WebSocket from "ws";
import type { AudioFrame } from "../../audio/audio-frame.js";
import { decodeAlaw, encodeAlaw } from "../../audio/alaw.js";
import { FrameChunker } from "../../audio/frame-chunker.js";
import { decodeMulaw, encodeMulaw } from "../../audio/mulaw.js";
import type { CallEvent } from "../../call-events.js";
import type { MediaTransport } from "../transport.js";
import { WebSocketConnection } from "./websocket-connection.js";
import { parseTelnyxMessage, type TelnyxOutbound, type TelnyxStartInfo } from "./telnyx-messages.js";

export type { TelnyxStartInfo } from "./telnyx-messages.js";

/** G.711 is 8 kHz by definition; the only rate this adapter carries. */
const TELNYX_RATE = 8000;
/** One second of agent audio on the wire: 50 JSON `media` messages of about 250 bytes (216 of base64 G.711). */
const MEDIA_BYTES_PER_SECOND = 12_800;

interface G711 {
  decode(bytes: Uint8Array): Int16Array;
  encode(samples: Int16Array): Uint8Array;
}

/** The codecs taken, by `media_format.encoding`. Others (G722, OPUS, AMR-WB, L16) are refused at `start`. */
const CODECS: Record<string, G711> = {
  PCMU: { decode: decodeMulaw, encode: encodeMulaw },
  PCMA: { decode: decodeAlaw, encode: encodeAlaw },
};

/**
 * Telnyx media streaming adapter (Call Control `stream_url` with `stream_bidirectional_mode`
 * `rtp`). `start` names the stream's codec: PCMU or PCMA at 8 kHz mono are taken, anything else
 * is refused (`waitForStart` rejects and no audio flows). Audio both ways is in that codec, so
 * the carrier must ask for the same `stream_bidirectional_codec` as the stream's. `media` from
 * the caller is decoded into 20 ms frames; agent audio goes out as `{"event":"media"}`, `clear`
 * drops what Telnyx has queued, and marks are Telnyx's own (it sends a mark back once the audio
 * before it has played, at once when nothing is queued, and returns queued marks on `clear`:
 * the "Mark Frame" and "Mark Callback Frame" of the media streaming AsyncAPI).
 */
export class TelnyxTransport extends WebSocketConnection implements MediaTransport {
  readonly protocol = "telnyx";
  readonly inputSampleRate = TELNYX_RATE;
  readonly outputSampleRate = TELNYX_RATE;
  private readonly chunker = new FrameChunker(TELNYX_RATE);
  /** The stream's codec once its `start` was taken; undefined before, and after a refused one. */
  private codec: G711 | undefined;
  private readonly started: Promise<TelnyxStartInfo>;

  constructor(socket: WebSocket) {
    super(socket, MEDIA_BYTES_PER_SECOND);
    this.started = new Promise((resolve, reject) => {
      let startSeen = false;
      const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
        if (isBinary) return;
        const message = parseTelnyxMessage(data.toString());
        if (!message) return;
        switch (message.event) {
          case "start": {
            // Only the first `start` counts: a later one cannot switch the codec mid-call.
            if (startSeen) return;
            startSeen = true;
            const { encoding, sampleRate, channels } = message.start;
            const codec = Object.hasOwn(CODECS, encoding) ? CODECS[encoding] : undefined;
            if (!codec || sampleRate !== TELNYX_RATE || channels !== 1) {
              reject(new Error(`unsupported media format: ${encoding} at ${sampleRate} Hz, ${channels} channel(s) (PCMU or PCMA at 8000 Hz mono are taken)`));
              return;
            }
            this.codec = codec;
            resolve(message.start);
            break;
          }
          case "media": {
            // Only the caller's audio: with `both_tracks` Telnyx also echoes the agent's (`outbound`).
            if (!this.codec || (message.media.track !== undefined && message.media.track !== "inbound")) return;
            for (const samples of this.chunker.push(this.codec.decode(Buffer.from(message.media.payload, "base64")))) {
              this.emit("audio", { samples, sampleRate: TELNYX_RATE });
            }
            break;
          }
          case "mark":
            this.emit("mark", message.mark.name);
            break;
          case "dtmf":
            this.emit("dtmf", message.dtmf.digit);
            break;
          case "stop":
            this.hangup("caller_hangup");
            break;
        }
      };
      socket.on("message", onMessage);
      socket.on("close", () => {
        reject(new Error("the stream closed before its start message"));
        this.hangup("connection_closed");
      });
      socket.on("error", () => this.hangup("connection_error"));
    });
    // A stream that closes before `start`, or starts in a refused format, rejects `started`; callers that never wait must not crash.
    this.started.catch(() => undefined);
  }

  /** The `start` message: stream id, call control id, media format, custom parameters and client state. */
  waitForStart(): Promise<TelnyxStartInfo> {
    return this.started;
  }

  /** Sends one 20 ms agent frame in the stream's codec; nothing before a taken `start` (no codec yet). */
  sendAudio(frame: AudioFrame): void {
    if (frame.sampleRate !== TELNYX_RATE) throw new Error(`Telnyx audio must be 8000 Hz, got ${frame.sampleRate}`);
    if (!this.codec) return;
    const message: TelnyxOutbound = { event: "media", media: { payload: Buffer.from(this.codec.encode(frame.samples)).toString("base64") } };
    this.sendAudioMessage(JSON.stringify(message));
  }

  clearAudio(): void {
    this.send({ event: "clear" });
  }

  sendMark(name: string): void {
    this.send({ event: "mark", mark: { name } });
  }

  sendEvent(_event: CallEvent): void {
    // Telnyx streams carry audio only.
  }

  private send(message: TelnyxOutbound): void {
    this.sendRaw(JSON.stringify(message));
  }
}
