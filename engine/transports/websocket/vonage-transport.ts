import type WebSocket from "ws";
import { samplesPerFrame, type AudioFrame } from "../../audio/audio-frame.js";
import { FrameChunker } from "../../audio/frame-chunker.js";
import { bytesToPcm16, pcm16ToBytes } from "../../audio/pcm16.js";
import type { CallEvent } from "../../call-events.js";
import type { MediaTransport } from "../transport.js";
import { MAX_BUFFERED_AUDIO_MS, WebSocketConnection } from "./websocket-connection.js";
import { parseVonageConnected, parseVonageMessage, type VonageOutbound, type VonageStartInfo } from "./vonage-messages.js";

export type { VonageStartInfo };

/** The rate Parley asks for in its NCCO, reported until `websocket:connected` says otherwise. */
const DEFAULT_RATE = 16000;

/**
 * Vonage Voice API WebSocket adapter. The first message, text `websocket:connected`, gives the
 * stream's rate (L16 at 8 or 16 kHz) and the NCCO's headers; anything else first refuses the
 * stream (`waitForStart` rejects; the caller closes the socket) and every later message is
 * ignored. Then binary messages carry 20 ms of caller audio, `websocket:dtmf` key presses and
 * `websocket:notify` the marks sent as `notify` actions. Vonage has no stop message: the socket
 * closing is the hang-up. Audio stays at the stream's rate (no resampling at the edge).
 */
export class VonageTransport extends WebSocketConnection implements MediaTransport {
  readonly protocol = "vonage";
  private start: VonageStartInfo | undefined;
  private refused = false;
  private chunker: FrameChunker | undefined;
  private readonly started: Promise<VonageStartInfo>;

  constructor(socket: WebSocket) {
    // Binary L16 at 16 kHz, the highest rate accepted: 8 kHz streams are held tighter in sendAudio.
    super(socket, DEFAULT_RATE * 2);
    this.started = new Promise((resolve, reject) => {
      const refuse = (reason: string) => {
        this.refused = true;
        reject(new Error(reason));
      };
      socket.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
        if (this.refused) return;
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (!this.start) {
          if (isBinary) return refuse("the first message is not websocket:connected");
          const start = parseVonageConnected(bytes.toString("utf8"));
          if (typeof start === "string") return refuse(start);
          this.start = start;
          this.chunker = new FrameChunker(start.sampleRate);
          return resolve(start);
        }
        if (isBinary) return this.receiveAudio(bytes);
        const message = parseVonageMessage(bytes.toString("utf8"));
        if (message?.event === "websocket:dtmf") this.emit("dtmf", message.digit);
        else if (message?.event === "websocket:notify") this.emit("mark", message.name);
      });
      socket.on("close", () => {
        refuse("the stream closed before its websocket:connected message");
        this.hangup("caller_hangup");
      });
      socket.on("error", () => this.hangup("connection_error"));
    });
    // A stream that closes or is refused before its start rejects `started`; callers that never wait must not crash.
    this.started.catch(() => undefined);
  }

  get inputSampleRate(): number {
    return this.start?.sampleRate ?? DEFAULT_RATE;
  }

  get outputSampleRate(): number {
    return this.inputSampleRate;
  }

  /** The `websocket:connected` message: content-type, rate and the NCCO's headers (the stream token). */
  waitForStart(): Promise<VonageStartInfo> {
    return this.started;
  }

  /** Sends one 20 ms frame as binary L16 at the stream's rate; nothing before the stream has started. */
  sendAudio(frame: AudioFrame): void {
    if (!this.start) return;
    const rate = this.start.sampleRate;
    if (frame.sampleRate !== rate) throw new Error(`Vonage audio must be ${rate} Hz, got ${frame.sampleRate}`);
    // The base bounds unsent audio for 16 kHz; an 8 kHz stream's bytes play twice as long.
    if (this.socket.bufferedAmount > (rate * 2 * MAX_BUFFERED_AUDIO_MS) / 1000) return;
    this.sendAudioMessage(pcm16ToBytes(frame.samples));
  }

  clearAudio(): void {
    this.send({ action: "clear" });
  }

  /** A `notify` action: Vonage answers `websocket:notify` with the payload once the audio queued before it has played. */
  sendMark(name: string): void {
    this.send({ action: "notify", payload: { name } });
  }

  sendEvent(_event: CallEvent): void {
    // Vonage streams carry audio only.
  }

  /** Caller audio: whole samples, at most one 20 ms frame a message (what Vonage sends); anything else is dropped. */
  private receiveAudio(bytes: Buffer): void {
    const rate = this.start!.sampleRate;
    if (bytes.length === 0 || bytes.length % 2 !== 0 || bytes.length > samplesPerFrame(rate) * 2) return;
    for (const samples of this.chunker!.push(bytesToPcm16(bytes))) this.emit("audio", { samples, sampleRate: rate });
  }

  private send(message: VonageOutbound): void {
    if (this.start) this.sendRaw(JSON.stringify(message));
  }
}
