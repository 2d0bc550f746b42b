import dgram, { type RemoteInfo, type Socket } from "node:dgram";
import { isIPv6 } from "node:net";
import { EventEmitter } from "eventemitter3";
import { decodeAlaw, encodeAlaw } from "../../audio/alaw.js";
import { FRAME_MS, samplesPerFrame, type AudioFrame } from "../../audio/audio-frame.js";
import { systemClock, type Clock, type TimerHandle } from "../../audio/clock.js";
import { FrameChunker } from "../../audio/frame-chunker.js";
import { JitterBuffer, type JitterBufferOptions, type JitterBufferStats } from "../../audio/jitter-buffer.js";
import { decodeMulaw, encodeMulaw } from "../../audio/mulaw.js";
import { parseTelephoneEvent, type DtmfDigit } from "./dtmf-event.js";
import { DtmfReceiver } from "./dtmf-receiver.js";
import { planDtmfEvent, type DtmfToneOptions, type PlannedEventPacket } from "./dtmf-sender.js";
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from "./rtp-packet.js";
import { RtpSender, type RtpNumbering } from "./rtp-sender.js";
import { RtpSourcePolicy } from "./rtp-source-policy.js";
import type { G711Codec, NegotiatedMedia } from "./sdp-negotiation.js";

const RATE = 8000;
/** A forward sequence jump past this (2 s of 20 ms packets) restarts playout instead of concealing the gap. */
const MAX_SEQUENCE_JUMP = 100;

const CODECS: Record<G711Codec, { encode: (samples: Int16Array) => Uint8Array; decode: (bytes: Uint8Array) => Int16Array }> = {
  PCMU: { encode: encodeMulaw, decode: decodeMulaw },
  PCMA: { encode: encodeAlaw, decode: decodeAlaw },
};
const STATIC_CODECS: Partial<Record<number, G711Codec>> = { 0: "PCMU", 8: "PCMA" };

export interface RtpSessionOptions {
  /** Local address to bind (SDP may carry a different, public one). */
  host: string;
  /** A fixed port; 0 (the default) lets the OS pick. Ignored when `portRange` is given. */
  port?: number;
  /** Inclusive range to bind in: even ports (customary for RTP) tried from a random start. */
  portRange?: readonly [number, number];
  clock?: Clock;
  jitter?: JitterBufferOptions;
  /** Latch onto the first packet's source (default true); see RtpSourcePolicy. */
  symmetric?: boolean;
  /** See RtpSender (default 100 ms). */
  talkspurtGapMs?: number;
  /** See the `timeout` event (default DEFAULT_RTP_TIMEOUT_MS; 0 turns it off). */
  timeoutMs?: number;
}

/**
 * A far end silent this long (not a packet, comfort noise included) while we expect its audio
 * is gone: a phone that lost its network sends no BYE, and the call would otherwise run (and be
 * billed) until its maximum duration. Silence-suppressing phones still send comfort noise or
 * keep-alive packets far more often than this.
 */
export const DEFAULT_RTP_TIMEOUT_MS = 60_000;

export interface RtpSessionEvents {
  /**
   * Far-end audio: one 20 ms PCM16 frame at 8 kHz every 20 ms from `start()` to `close()`, in
   * order, with silence standing in for lost packets and for times with nothing to play.
   */
  audio: (frame: AudioFrame) => void;
  /** A key press, once per RFC 4733 event. */
  dtmf: (digit: DtmfDigit) => void;
  /** Once, when nothing came from the far end for `timeoutMs` while its audio was expected. */
  timeout: () => void;
}

export interface RtpSessionStats {
  sent: number;
  /** Packets accepted: audio and telephone events from the far end. */
  received: number;
  /** Packets from strangers, with payload types we did not negotiate, or before `start()`. */
  ignored: number;
  malformed: number;
  socketErrors: number;
  /**
   * Frames of silence emitted because there was nothing to play: before the far end's first
   * packet, while the jitter buffer fills, and through pauses (silence suppression, hold).
   * Silence for packets lost inside a stream is `jitter.concealed`.
   */
  silenceFrames: number;
  /** The current inbound stream's jitter buffer (a new SSRC starts a new one). */
  jitter: JitterBufferStats;
}

/**
 * One call's RTP media over a UDP socket: G.711 at 8 kHz out and in, RFC 4733 DTMF both ways.
 *
 * Open it (binds the port, so it can go into our SDP), then `start()` it with the negotiated
 * media; `start()` again after a re-INVITE. Outgoing frames are sent as given, one packet each
 * (the caller paces them); there is no send queue, so `clearAudio()` only makes the next frame
 * start a new talkspurt. Incoming audio goes through a jitter buffer read every 20 ms.
 *
 * The playout clock runs from the first `start()` to `close()`: one frame every 20 ms on an
 * absolute schedule (a late timer emits every overdue frame at once), silence when the buffer
 * has nothing to play. Far ends that suppress silence (DTX, comfort noise) send nothing during
 * pauses, and the engine counts frames: its endpointing needs the silence to end a turn, and
 * the recording's caller channel, placed by counting frames, must keep in step with the
 * agent's. It starts at `start()` rather than at the first packet because a phone with VAD may
 * send nothing until its user speaks, which would shift the whole caller side.
 *
 * Sources (RtpSourcePolicy): packets are read only from the far end, as its SDP and the call's
 * signalling name it; with symmetric RTP (RFC 4961, on by default) the first good packet latches
 * the session onto its source, which is then the only one read and where we send. Anything else
 * is counted as ignored and never reaches the jitter buffer.
 */
export class RtpSession extends EventEmitter<RtpSessionEvents> {
  readonly localAddress: string;
  readonly localPort: number;
  private readonly clock: Clock;
  private readonly sender: RtpSender;
  private readonly dtmfReceiver = new DtmfReceiver();
  private media: NegotiatedMedia | undefined;
  private sources: RtpSourcePolicy | undefined;
  private jitter: JitterBuffer;
  private chunker = new FrameChunker(RATE);
  /** Frames cut from packets longer than 20 ms, waiting for their turn. */
  private readonly ready: Int16Array[] = [];
  private inbound: { ssrc: number; highest: number } | undefined;
  private playoutTimer: TimerHandle | undefined;
  /** When the next frame is due; undefined until `start()`. */
  private nextFrameAt: number | undefined;
  /** When the far end last sent anything (or the media was last negotiated); see `timeout`. */
  private lastHeardAt = 0;
  private timedOut = false;
  private dtmfQueue: Promise<void> = Promise.resolve();
  private readonly waits = new Set<{ handle: TimerHandle; reject: (error: Error) => void }>();
  private closing: Promise<void> | undefined;
  private readonly counters = { sent: 0, received: 0, ignored: 0, malformed: 0, socketErrors: 0, silenceFrames: 0 };

  /** Binds a UDP socket as the options say and returns the session on it. */
  static async open(options: RtpSessionOptions): Promise<RtpSession> {
    const socket = options.portRange ? await bindInRange(options.host, options.portRange) : await bind(options.host, options.port ?? 0);
    return new RtpSession(socket, options);
  }

  private constructor(
    private readonly socket: Socket,
    private readonly options: RtpSessionOptions,
  ) {
    super();
    this.clock = options.clock ?? systemClock;
    this.sender = new RtpSender({ clock: this.clock, talkspurtGapMs: options.talkspurtGapMs });
    this.jitter = new JitterBuffer(options.jitter);
    const { address, port } = socket.address();
    this.localAddress = address;
    this.localPort = port;
    socket.on("message", (data, from) => this.onMessage(data, from));
    socket.on("error", () => this.counters.socketErrors++);
  }

  get stats(): RtpSessionStats {
    return { ...this.counters, jitter: this.jitter.stats };
  }

  /** Where packets go (and, once latched, the only source read); undefined before `start()`. */
  get remoteAddress(): { address: string; port: number } | undefined {
    return this.sources && { ...this.sources.remote };
  }

  /**
   * Applies a negotiated offer/answer (remote address, codec, DTMF payload type, direction); the
   * first call starts playout. `signalling` is the address the offer or answer came from (see
   * RtpSourcePolicy); new SDP addresses start latching afresh.
   */
  start(media: NegotiatedMedia, signalling?: string): void {
    if (this.closing) throw new Error("the RTP session is closed");
    const previous = this.media;
    this.media = media;
    if (!previous || previous.remoteAddress !== media.remoteAddress || previous.remotePort !== media.remotePort) {
      this.sources = new RtpSourcePolicy({ address: media.remoteAddress, port: media.remotePort }, signalling, this.options.symmetric !== false);
    }
    // The negotiated direction may have changed (hold): the far end's silence is counted from now.
    this.lastHeardAt = this.clock.now();
    if (this.nextFrameAt === undefined) {
      this.nextFrameAt = this.clock.now() + FRAME_MS;
      this.playoutTimer = this.clock.setTimeout(() => this.playout(), FRAME_MS);
    }
  }

  /** Sends one 8 kHz frame (normally 20 ms) as one packet; dropped before `start()`, on hold, or during a DTMF event. */
  sendAudio(frame: AudioFrame): void {
    if (frame.sampleRate !== RATE) throw new RangeError(`RTP audio must be ${RATE} Hz, got ${frame.sampleRate}`);
    const media = this.media;
    if (!media || !this.canSend()) return;
    const numbering = this.sender.audio(frame.samples.length);
    if (!numbering) return;
    this.transmit(packetOf(numbering, media.codec.payloadType, CODECS[media.codec.name].encode(frame.samples)));
  }

  /** Nothing is queued on our side; the next frame starts a new talkspurt. */
  clearAudio(): void {
    this.sender.endTalkspurt();
  }

  /**
   * Sends digits as RFC 4733 events, one after the other (calls queue behind each other).
   * Resolves when the last end packet is out; rejects on a bad digit, when the far end did not
   * negotiate telephone-event, or when the session closes first.
   */
  sendDtmf(digits: string, options: DtmfToneOptions = {}): Promise<void> {
    let plans: PlannedEventPacket[][];
    try {
      plans = Array.from(digits, (digit) => planDtmfEvent(digit, options, RATE));
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const run = this.dtmfQueue.then(async () => {
      for (const plan of plans) await this.sendEvent(plan);
    });
    this.dtmfQueue = run.catch(() => undefined);
    return run;
  }

  /** Stops playout and DTMF, and releases the port. */
  close(): Promise<void> {
    if (!this.closing) {
      this.stopPlayout();
      for (const wait of this.waits) {
        this.clock.clearTimeout(wait.handle);
        wait.reject(new Error("the RTP session closed"));
      }
      this.waits.clear();
      this.closing = new Promise((resolve) => this.socket.close(() => resolve()));
    }
    return this.closing;
  }

  private canSend(): boolean {
    const { media } = this;
    const remote = this.sources?.remote;
    if (this.closing || !media || !remote || remote.port === 0 || remote.address === "0.0.0.0") return false;
    return media.direction === "sendrecv" || media.direction === "sendonly";
  }

  private async sendEvent(plan: PlannedEventPacket[]): Promise<void> {
    if (this.closing) throw new Error("the RTP session closed");
    if (!this.media) throw new Error("the RTP session has not started");
    if (this.media.dtmfPayloadType === null) throw new Error("the far end did not negotiate telephone-event");
    if (!this.canSend()) return;
    const final = parseTelephoneEvent(plan[plan.length - 1]!.payload)!;
    this.sender.beginEvent();
    const startedAt = this.clock.now();
    try {
      for (const packet of plan) {
        await this.sleep(startedAt + packet.atMs - this.clock.now());
        const payloadType = this.media?.dtmfPayloadType ?? null;
        if (payloadType === null || !this.canSend()) return;
        this.transmit(packetOf(this.sender.eventPacket(packet.marker), payloadType, packet.payload));
      }
    } finally {
      this.sender.endEvent(final.duration);
    }
  }

  private transmit(packet: RtpPacket): void {
    const remote = this.sources!.remote;
    this.counters.sent++;
    this.socket.send(serializeRtpPacket(packet), remote.port, remote.address, (error) => {
      if (error) this.counters.socketErrors++;
    });
  }

  private onMessage(data: Buffer, from: RemoteInfo): void {
    const { media, sources } = this;
    if (this.closing || !media || !sources?.admits(from)) {
      this.counters.ignored++;
      return;
    }
    // Anything from the far end shows it is there, comfort noise and unknown payloads included.
    this.lastHeardAt = this.clock.now();
    const parsed = parseRtpPacket(data);
    if (!parsed.ok) {
      this.counters.malformed++;
      return;
    }
    const packet = parsed.packet;
    const isDtmf = packet.payloadType === media.dtmfPayloadType;
    const codec = packet.payloadType === media.codec.payloadType ? media.codec.name : STATIC_CODECS[packet.payloadType];
    if (!isDtmf && (!codec || packet.payload.byteLength === 0)) {
      this.counters.ignored++;
      return;
    }
    sources.heard(from);
    this.counters.received++;
    if (isDtmf) {
      const digit = this.dtmfReceiver.receive(packet);
      if (digit) this.emit("dtmf", digit);
      return;
    }
    this.buffer(packet, CODECS[codec!].decode(packet.payload));
  }

  private buffer(packet: RtpPacket, samples: Int16Array): void {
    const inbound = this.inbound;
    const jump = inbound ? (packet.sequence - inbound.highest) & 0xffff : 0;
    if (!inbound || packet.ssrc !== inbound.ssrc || (jump > MAX_SEQUENCE_JUMP && jump < 0x8000)) {
      // A new stream (or one that skipped far ahead): concealing the gap would play minutes of silence.
      if (inbound) {
        this.jitter = new JitterBuffer(this.options.jitter);
        this.chunker = new FrameChunker(RATE);
      }
      this.inbound = { ssrc: packet.ssrc, highest: packet.sequence };
    } else if (jump > 0 && jump < 0x8000) {
      inbound.highest = packet.sequence;
    }
    this.jitter.insert({ sequence: packet.sequence, timestamp: packet.timestamp, marker: packet.marker, frame: { samples, sampleRate: RATE } });
  }

  /** Emits every frame due by now, then waits for the next (see the class comment). */
  private playout(): void {
    const now = this.clock.now();
    while (this.nextFrameAt! <= now) {
      this.nextFrameAt = this.nextFrameAt! + FRAME_MS;
      this.emit("audio", this.nextFrame());
      if (this.closing) return; // a listener closed the session
    }
    if (this.farEndGone(now)) {
      this.timedOut = true;
      this.emit("timeout");
      if (this.closing) return;
    }
    this.playoutTimer = this.clock.setTimeout(() => this.playout(), this.nextFrameAt! - now);
  }

  /** True once, when the far end has been silent past the timeout while it should be sending. */
  private farEndGone(now: number): boolean {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_RTP_TIMEOUT_MS;
    const direction = this.media?.direction;
    const expectsAudio = direction === "sendrecv" || direction === "recvonly";
    return !this.timedOut && timeoutMs > 0 && expectsAudio && now - this.lastHeardAt >= timeoutMs;
  }

  /** The next 20 ms of far-end audio: buffered packets cut into frames, silence when nothing is buffered. */
  private nextFrame(): AudioFrame {
    while (this.ready.length === 0) {
      const read = this.jitter.read();
      if (!read) break;
      this.ready.push(...this.chunker.push(read.frame.samples));
    }
    // With nothing more to play, a remainder shorter than a frame goes out padded with silence.
    const samples = this.ready.shift() ?? this.chunker.flush()[0];
    if (samples) return { samples, sampleRate: RATE };
    this.counters.silenceFrames++;
    return { samples: new Int16Array(samplesPerFrame(RATE)), sampleRate: RATE };
  }

  private stopPlayout(): void {
    if (this.playoutTimer === undefined) return;
    this.clock.clearTimeout(this.playoutTimer);
    this.playoutTimer = undefined;
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wait = {
        handle: this.clock.setTimeout(() => {
          this.waits.delete(wait);
          resolve();
        }, ms),
        reject,
      };
      this.waits.add(wait);
    });
  }
}

function bind(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(isIPv6(host) ? "udp6" : "udp4");
    const onError = (error: Error) => {
      try {
        socket.close();
      } catch {
        // already closed by the failed bind
      }
      reject(error);
    };
    socket.once("error", onError);
    socket.bind({ port, address: host, exclusive: true }, () => {
      socket.off("error", onError);
      resolve(socket);
    });
  });
}

/** Tries the range's even ports (all its ports if it has none) from a random start until one binds. */
async function bindInRange(host: string, [min, max]: readonly [number, number]): Promise<Socket> {
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max > 65535 || min > max) throw new RangeError(`bad RTP port range ${min}-${max}`);
  const first = min % 2 === 0 ? min : min + 1;
  const step = first <= max ? 2 : 1;
  const start = first <= max ? first : min;
  const count = Math.floor((max - start) / step) + 1;
  const offset = Math.floor(Math.random() * count);
  for (let i = 0; i < count; i++) {
    const port = start + ((offset + i) % count) * step;
    try {
      return await bind(host, port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EADDRINUSE" && code !== "EACCES") throw error;
    }
  }
  throw new Error(`no free RTP port in ${min}-${max}`);
}

/**
 * The packet `numbering` numbers, written out field by field: on Node 20, `{ ...numbering,
 * payloadType, ... }` gives every packet a hidden class of its own, which makes it slow and
 * its garbage outlive young collections (docs/api-throughput.md, seventh round).
 */
function packetOf(numbering: RtpNumbering, payloadType: number, payload: Uint8Array): RtpPacket {
  return { marker: numbering.marker, payloadType, sequence: numbering.sequence, timestamp: numbering.timestamp, ssrc: numbering.ssrc, csrcs: [], payload };
}
