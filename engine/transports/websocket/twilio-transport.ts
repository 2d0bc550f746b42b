import type WebSocket from "ws";
import type { AudioFrame } from "../../audio/audio-frame.js";
import { FrameChunker } from "../../audio/frame-chunker.js";
import { decodeMulaw, encodeMulaw } from "../../audio/mulaw.js";
import type { CallEvent } from "../../call-events.js";
import type { MediaTransport } from "../transport.js";
import { WebSocketConnection } from "./websocket-connection.js";
import { parseTwilioMessage, type TwilioOutbound, type TwilioStartInfo } from "./twilio-messages.js";

const TWILIO_RATE = 8000;
/** One second of agent audio on the wire: 50 JSON `media` messages of about 310 bytes (base64 mu-law, stream id). */
const MEDIA_BYTES_PER_SECOND = 16_000;

/**
 * Twilio Media Streams adapter: `start` carries the stream id and custom parameters, `media`
 * carries base64 mu-law 8 kHz, `clear` drops buffered agent audio, `mark` reports playback.
 * Audio stays at 8 kHz (no resampling at the edge).
 */
export class TwilioTransport extends WebSocketConnection implements MediaTransport {
  readonly protocol = "twilio";
  readonly inputSampleRate = TWILIO_RATE;
  readonly outputSampleRate = TWILIO_RATE;
  private readonly chunker = new FrameChunker(TWILIO_RATE);
  private streamSid: string | undefined;
  private readonly started: Promise<TwilioStartInfo>;

  constructor(socket: WebSocket) {
    super(socket, MEDIA_BYTES_PER_SECOND);
    this.started = new Promise((resolve, reject) => {
      const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
        if (isBinary) return;
        const message = parseTwilioMessage(data.toString());
        if (!message) return;
        switch (message.event) {
          case "start":
            this.streamSid = message.start.streamSid ?? message.streamSid;
            resolve(message.start);
            break;
          case "media":
            if (message.media.track !== undefined && message.media.track !== "inbound") return;
            for (const samples of this.chunker.push(decodeMulaw(Buffer.from(message.media.payload, "base64")))) {
              this.emit("audio", { samples, sampleRate: TWILIO_RATE });
            }
            break;
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
    // A stream that closes before `start` rejects `started`; callers that never wait must not crash.
    this.started.catch(() => undefined);
  }

  /** The `start` message: stream id, call id and custom parameters (token, agent, To). */
  waitForStart(): Promise<TwilioStartInfo> {
    return this.started;
  }

  sendAudio(frame: AudioFrame): void {
    if (frame.sampleRate !== TWILIO_RATE) throw new Error(`Twilio audio must be 8000 Hz, got ${frame.sampleRate}`);
    const message: TwilioOutbound = { event: "media", streamSid: this.streamSid ?? "", media: { payload: Buffer.from(encodeMulaw(frame.samples)).toString("base64") } };
    this.sendAudioMessage(JSON.stringify(message));
  }

  clearAudio(): void {
    this.send({ event: "clear", streamSid: this.streamSid ?? "" });
  }

  sendMark(name: string): void {
    this.send({ event: "mark", streamSid: this.streamSid ?? "", mark: { name } });
  }

  sendEvent(_event: CallEvent): void {
    // Twilio streams carry audio only.
  }

  private send(message: TwilioOutbound): void {
    this.sendRaw(JSON.stringify(message));
  }
}
