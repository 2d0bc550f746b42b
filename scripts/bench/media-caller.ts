import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import { encodeMulaw, decodeMulaw } from "../../engine/audio/mulaw.js";
import { bytesToPcm16, pcm16ToBytes } from "../../engine/audio/pcm16.js";

/**
 * A caller over a media WebSocket, for the benchmark and the media tests: a real client that
 * streams audio in real time (20 ms frames, silence between utterances, as a phone line does)
 * and records what comes back (agent audio, control messages) with arrival times on its own
 * clock, in milliseconds since the epoch with sub-millisecond resolution.
 */
export interface ReceivedAudio {
  samples: Int16Array;
  at: number;
}

/** When an utterance's first and last frames left the client. */
export interface SpokenAt {
  startedAt: number;
  endedAt: number;
  /** When the frames holding the sample offsets given to `speak` as `marks` left, in their order. */
  marksAt: number[];
}

/** Epoch milliseconds from the monotonic clock: fractional, and never stepped by NTP. */
export function clientNow(): number {
  return performance.timeOrigin + performance.now();
}

interface QueuedFrame {
  samples: Int16Array;
  onSent?: (at: number) => void;
}

/** Seeded white noise (mulberry32 into a uniform distribution) so noisy runs are repeatable. */
function noiseSource(rms: number, seed: number): (frame: Int16Array) => Int16Array {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // A uniform distribution on [-a, a] has an RMS of a / sqrt(3).
  const amplitude = rms * Math.sqrt(3);
  return (frame) => {
    const out = new Int16Array(frame.length);
    for (let i = 0; i < frame.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(frame[i]! + (next() * 2 - 1) * amplitude)));
    return out;
  };
}

export abstract class MediaClient {
  readonly messages: Array<{ at: number; message: any }> = [];
  readonly audio: ReceivedAudio[] = [];
  /** When the socket opened. */
  openedAt = 0;
  private queue: QueuedFrame[] = [];
  private pump: NodeJS.Timeout | undefined;
  private nextAt = 0;
  private addNoise: ((frame: Int16Array) => Int16Array) | undefined;
  private closedResolve!: () => void;
  readonly closed: Promise<void> = new Promise((r) => (this.closedResolve = r));
  closeCode: number | undefined;
  closeReason = "";

  protected constructor(
    protected readonly ws: WebSocket,
    readonly sampleRate: number,
  ) {
    ws.on("close", (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.stopPump();
      this.closedResolve();
    });
  }

  protected abstract sendFrame(samples: Int16Array): void;

  /** Sends a DTMF digit the way the protocol does. */
  abstract sendDtmf(digit: string): void;

  /** Ends the call the way the protocol does (and closes the socket). */
  abstract hangUp(): void;

  protected record(message: any): void {
    this.messages.push({ at: clientNow(), message });
  }

  protected receiveAudio(samples: Int16Array): void {
    this.audio.push({ samples, at: clientNow() });
  }

  /** Mixes white noise at `rms` (PCM16 units) into every frame sent from now on, speech and silence. */
  setLineNoise(rms: number, seed: number): void {
    this.addNoise = rms > 0 ? noiseSource(rms, seed) : undefined;
  }

  /** Starts streaming: queued speech when there is some, silence otherwise, every 20 ms. */
  startStreaming(): void {
    this.nextAt = clientNow();
    const frame = this.sampleRate / 50;
    const tick = () => {
      while (clientNow() >= this.nextAt) {
        if (this.ws.readyState !== WebSocket.OPEN) return;
        const queued = this.queue.shift();
        const samples = queued?.samples ?? new Int16Array(frame);
        this.sendFrame(this.addNoise ? this.addNoise(samples) : samples);
        queued?.onSent?.(clientNow());
        this.nextAt += 20;
      }
      this.pump = setTimeout(tick, Math.max(1, this.nextAt - clientNow()));
    };
    tick();
  }

  /** Sends `samples` at once as 20 ms frames, without real-time pacing (for tests that need no clock). */
  sendUnpaced(samples: Int16Array): void {
    const frame = this.sampleRate / 50;
    for (let i = 0; i < samples.length; i += frame) {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      const chunk = new Int16Array(frame);
      chunk.set(samples.subarray(i, Math.min(i + frame, samples.length)));
      this.sendFrame(this.addNoise ? this.addNoise(chunk) : chunk);
    }
  }

  stopPump(): void {
    if (this.pump) clearTimeout(this.pump);
    this.pump = undefined;
  }

  /**
   * Queues speech (at the client's rate); resolves when its first and last frames have been
   * sent, with the times the frames holding `marks` (sample offsets) were sent.
   */
  speak(samples: Int16Array, marks: readonly number[] = []): Promise<SpokenAt> {
    const frame = this.sampleRate / 50;
    let startedAt = 0;
    const marksAt = marks.map(() => 0);
    return new Promise((resolve) => {
      for (let i = 0; i < samples.length; i += frame) {
        const chunk = new Int16Array(frame);
        chunk.set(samples.subarray(i, Math.min(i + frame, samples.length)));
        const first = i === 0;
        const last = i + frame >= samples.length;
        const marked = marks.flatMap((m, k) => (m >= i && (m < i + frame || (last && m >= samples.length)) ? [k] : []));
        this.queue.push({
          samples: chunk,
          onSent: (at) => {
            if (first) startedAt = at;
            for (const k of marked) marksAt[k] = at;
            if (last) resolve({ startedAt, endedAt: at, marksAt });
          },
        });
      }
    });
  }

  /** Queues speech; resolves with the time its last frame was sent. */
  async say(samples: Int16Array): Promise<number> {
    return (await this.speak(samples)).endedAt;
  }

  /** Agent audio received after `since`, concatenated. */
  audioSince(since: number): Int16Array {
    const parts = this.audio.filter((a) => a.at >= since);
    const out = new Int16Array(parts.reduce((n, p) => n + p.samples.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p.samples, at);
      at += p.samples.length;
    }
    return out;
  }

  /** Resolves when a message matching `predicate` arrives after `since` (or has arrived). */
  waitFor(predicate: (message: any) => boolean, since = 0, timeoutMs = 30_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const check = () => {
        const hit = this.messages.find((m) => m.at >= since && predicate(m.message));
        if (hit) return resolve(hit.message);
        if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting; got ${JSON.stringify(this.messages.slice(-5))}`));
        setTimeout(check, 10);
      };
      check();
    });
  }

  /** Last time agent audio arrived. */
  lastAudioAt(): number {
    return this.audio[this.audio.length - 1]?.at ?? 0;
  }

  /** First agent audio frame that arrived after `since`, if any. */
  firstAudioAfter(since: number): number | undefined {
    return this.audio.find((a) => a.at > since)?.at;
  }

  /**
   * Waits for the agent's reply: agent audio arriving after `since`, then no audio for
   * `quietMs` (the agent finished speaking).
   */
  async waitForAgentSilence(quietMs = 700, since = 0, timeoutMs = 30_000): Promise<void> {
    const started = Date.now();
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        const last = this.lastAudioAt();
        if (last > since && clientNow() - last >= quietMs) return resolve();
        if (Date.now() - started > timeoutMs) return reject(new Error("agent never went quiet"));
        setTimeout(check, 20);
      };
      check();
    });
  }

  /**
   * Stops (`false`) or resumes (`true`) reading the connection while keeping it open: a client
   * that stalls, as the media abuse tests need.
   */
  setReading(reading: boolean): void {
    const socket = (this.ws as unknown as { _socket: import("node:net").Socket })._socket;
    if (reading) socket.resume();
    else socket.pause();
  }

  close(): void {
    this.stopPump();
    this.ws.close();
  }
}

/** Parley's native protocol: PCM16 binary frames, JSON control. */
export class NativeMediaClient extends MediaClient {
  static connect(url: string, key: string, sampleRate = 16000): Promise<NativeMediaClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
      const client = new NativeMediaClient(ws, sampleRate);
      ws.on("message", (data, isBinary) => {
        if (isBinary) client.receiveAudio(bytesToPcm16(new Uint8Array(data as Buffer)));
        else client.record(JSON.parse(data.toString()));
      });
      ws.once("open", () => {
        client.openedAt = clientNow();
        resolve(client);
      });
      ws.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body || "null") })));
      });
      ws.once("error", reject);
    });
  }

  protected sendFrame(samples: Int16Array): void {
    this.ws.send(pcm16ToBytes(samples), { binary: true });
  }

  sendDtmf(digit: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "dtmf", digit }));
  }

  hangUp(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "hangup" }));
    this.close();
  }
}

/** The sids a Twilio stream carries; random (account all zeros) when not given. */
export interface TwilioStreamIds {
  callSid?: string;
  streamSid?: string;
  accountSid?: string;
}

/** Twilio Media Streams as Twilio sends it: JSON messages, base64 mu-law 8 kHz. */
export class TwilioMediaClient extends MediaClient {
  private sequence = 0;
  /** Unique per connection, like Twilio's: the service stores it in the call's metadata (`twilio_call_sid`). */
  readonly callSid: string;
  readonly streamSid: string;
  readonly accountSid: string;

  private constructor(ws: WebSocket, ids: TwilioStreamIds) {
    super(ws, 8000);
    this.callSid = ids.callSid ?? "CA" + randomBytes(16).toString("hex");
    this.streamSid = ids.streamSid ?? "MZ" + randomBytes(16).toString("hex");
    this.accountSid = ids.accountSid ?? "AC" + "0".repeat(32);
  }

  /** `ids` and `headers` let a Twilio stand-in stream a call it placed (its sids, a signed upgrade). */
  static connect(url: string, customParameters: Record<string, string>, ids: TwilioStreamIds = {}, headers: Record<string, string> = {}): Promise<TwilioMediaClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const client = new TwilioMediaClient(ws, ids);
      ws.on("message", (data) => {
        const message = JSON.parse(data.toString());
        if (message.event === "media") client.receiveAudio(decodeMulaw(Buffer.from(message.media.payload, "base64")));
        else client.record(message);
        if (message.event === "mark") client.send({ event: "mark", streamSid: client.streamSid, mark: { name: message.mark.name } });
      });
      ws.once("open", () => {
        client.openedAt = clientNow();
        client.send({ event: "connected", protocol: "Call", version: "1.0.0" });
        client.send({
          event: "start",
          streamSid: client.streamSid,
          start: {
            streamSid: client.streamSid,
            accountSid: client.accountSid,
            callSid: client.callSid,
            tracks: ["inbound"],
            customParameters,
            mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
          },
        });
        resolve(client);
      });
      ws.once("error", reject);
    });
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify({ ...message, sequenceNumber: String(++this.sequence) }));
  }

  protected sendFrame(samples: Int16Array): void {
    this.send({
      event: "media",
      streamSid: this.streamSid,
      media: { track: "inbound", chunk: String(this.sequence), timestamp: String(this.sequence * 20), payload: Buffer.from(encodeMulaw(samples)).toString("base64") },
    });
  }

  sendDtmf(digit: string): void {
    this.send({ event: "dtmf", streamSid: this.streamSid, dtmf: { track: "inbound_track", digit } });
  }

  hangUp(): void {
    this.send({ event: "stop", streamSid: this.streamSid, stop: { accountSid: this.accountSid, callSid: this.callSid } });
  }
}
