import type WebSocket from "ws";
import type { AudioFrame } from "../../audio/audio-frame.js";
import { FrameChunker } from "../../audio/frame-chunker.js";
import { OpusCodec } from "../../audio/opus.js";
import { bytesToPcm16, pcm16ToBytes } from "../../audio/pcm16.js";
import type { CallEvent } from "../../call-events.js";
import type { MediaTransport } from "../transport.js";
import { WebSocketConnection } from "./websocket-connection.js";
import { parseNativeClientMessage, toNativeMessage, type NativeFormat, type NativeServerMessage } from "./native-protocol.js";

/** One second of Opus agent audio on the wire: 24 kbit/s (the codec's bitrate) plus framing, rounded up. */
const OPUS_BYTES_PER_SECOND = 4000;

export interface NativeTransportOptions {
  format: NativeFormat;
  sampleRate: number;
  /**
   * Whether `tool_call` messages carry the tool's arguments and what it answered (default
   * true). A browser call's visitor gets only each tool's name and whether it worked: an
   * integrator's API answer may hold more than the agent says aloud.
   */
  toolDetails?: boolean;
}

/**
 * The native protocol over one WebSocket: audio both ways at the client's rate (PCM16 or
 * Opus), call events to the client as JSON.
 */
export class NativeTransport extends WebSocketConnection implements MediaTransport {
  readonly protocol = "native";
  readonly inputSampleRate: number;
  readonly outputSampleRate: number;
  private readonly chunker: FrameChunker;
  private readonly opus: OpusCodec | undefined;

  constructor(
    socket: WebSocket,
    private readonly options: NativeTransportOptions,
  ) {
    super(socket, options.format === "opus" ? OPUS_BYTES_PER_SECOND : options.sampleRate * 2);
    this.inputSampleRate = this.outputSampleRate = options.sampleRate;
    this.chunker = new FrameChunker(options.sampleRate);
    this.opus = options.format === "opus" ? new OpusCodec(options.sampleRate) : undefined;
    socket.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) this.receiveAudio(bytes);
      else this.receiveControl(bytes.toString("utf8"));
    });
    socket.on("close", () => this.hangup("caller_hangup"));
    socket.on("error", () => this.hangup("connection_error"));
  }

  /** First message on the socket: the call id and the audio format both sides use. */
  sendConnected(callId: string): void {
    this.sendJson({ type: "connected", call_id: callId, format: this.options.format, sample_rate: this.options.sampleRate, frame_ms: 20 });
  }

  /** Refuses the call on the open socket: an `error` message, then the close with `closeCode` (1008, 1011, 1013). */
  refuse(code: string, message: string, closeCode: number): void {
    this.sendJson({ type: "error", code, message });
    this.close(code, closeCode);
  }

  sendAudio(frame: AudioFrame): void {
    if (frame.sampleRate !== this.outputSampleRate) throw new Error(`expected ${this.outputSampleRate} Hz audio, got ${frame.sampleRate}`);
    this.sendAudioMessage(this.opus ? this.opus.encode(frame.samples) : pcm16ToBytes(frame.samples));
  }

  clearAudio(): void {
    this.sendJson({ type: "clear" });
  }

  sendMark(name: string): void {
    this.sendJson({ type: "mark", name });
  }

  sendEvent(event: CallEvent): void {
    const message = toNativeMessage(event);
    if (!message) return;
    if (message.type === "tool_call" && this.options.toolDetails === false) this.sendJson({ type: "tool_call", name: message.name, ok: message.ok });
    else this.sendJson(message);
  }

  private receiveAudio(bytes: Buffer): void {
    let samples: Int16Array;
    try {
      samples = this.opus ? this.opus.decode(bytes) : bytesToPcm16(bytes);
    } catch {
      // A packet the decoder refuses is lost audio, like a lost RTP packet: the call goes on.
      return;
    }
    for (const frame of this.chunker.push(samples)) this.emit("audio", { samples: frame, sampleRate: this.inputSampleRate });
  }

  private receiveControl(text: string): void {
    const message = parseNativeClientMessage(text);
    if (!message) return;
    if (message.type === "dtmf") this.emit("dtmf", message.digit);
    else if (message.type === "mark") this.emit("mark", message.name);
    else this.hangup("caller_hangup");
  }

  private sendJson(message: NativeServerMessage): void {
    this.sendRaw(JSON.stringify(message));
  }
}
