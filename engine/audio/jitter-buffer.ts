import { durationMs, type AudioFrame } from "./audio-frame.js";

/**
 * Receive-side jitter buffer for RTP audio: packets go in as they arrive (out of order,
 * duplicated, late); a reader calls `read()` once per frame period and gets frames back in
 * sequence order, `depthMs` behind the newest audio.
 *
 * Order, loss and lateness come from the 16-bit sequence number (extended across wrap-around
 * at 65535, as RFC 3550 receivers do); a packet behind the playout point (a copy of one already
 * played included) is late. Timestamps are carried through to the reader, not used to reorder:
 * a timestamp jump with contiguous sequence numbers (silence suppression) is not expanded into
 * silence. Each missing sequence number becomes one silence frame as long as the last frame
 * played. When the buffer runs empty it buffers again up to `depthMs` before
 * playing on; when it holds more than `maxDepthMs` it skips the oldest audio to bound latency.
 */
export interface JitterBufferOptions {
  /** Audio buffered before playing out (default 60 ms). */
  depthMs?: number;
  /** Above this much buffered audio the oldest frames are dropped (default 200 ms). */
  maxDepthMs?: number;
}

export interface RtpAudioPacket {
  /** RTP sequence number, 0..65535. */
  sequence: number;
  /** RTP timestamp (carried through, see above). */
  timestamp: number;
  frame: AudioFrame;
}

export interface JitterRead {
  frame: AudioFrame;
  sequence: number;
  /** The packet's timestamp; null for silence filling a gap. */
  timestamp: number | null;
  /** True when the frame is silence standing in for a missing packet. */
  concealed: boolean;
}

export const INSERT_OUTCOMES = ["accepted", "duplicate", "late"] as const;
export type InsertOutcome = (typeof INSERT_OUTCOMES)[number];

export interface JitterBufferStats {
  received: number;
  played: number;
  /** Silence frames played in place of missing packets. */
  concealed: number;
  late: number;
  duplicate: number;
  /** Frames dropped because the buffer grew past `maxDepthMs`. */
  overflow: number;
  /** Times the buffer ran empty while playing. */
  underruns: number;
}

export class JitterBuffer {
  private readonly depthMs: number;
  private readonly maxDepthMs: number;
  /** Waiting packets by extended sequence number. */
  private readonly packets = new Map<number, RtpAudioPacket>();
  /** Highest extended sequence number seen: the reference for unwrapping. */
  private highest: number | undefined;
  /** Extended sequence number of the next frame to play; undefined until playout starts. */
  private next: number | undefined;
  private playing = false;
  /** The last frame played: a gap is filled with silence as long as it. */
  private last: AudioFrame | undefined;
  private readonly counters: JitterBufferStats = { received: 0, played: 0, concealed: 0, late: 0, duplicate: 0, overflow: 0, underruns: 0 };

  constructor(options: JitterBufferOptions = {}) {
    this.depthMs = options.depthMs ?? 60;
    this.maxDepthMs = options.maxDepthMs ?? 200;
    if (this.maxDepthMs < this.depthMs) throw new RangeError("maxDepthMs must be at least depthMs");
  }

  get stats(): Readonly<JitterBufferStats> {
    return { ...this.counters };
  }

  /** Audio buffered and not yet played. */
  get bufferedMs(): number {
    let total = 0;
    for (const packet of this.packets.values()) total += durationMs(packet.frame);
    return total;
  }

  insert(packet: RtpAudioPacket): InsertOutcome {
    const extended = this.extend(packet.sequence);
    if (this.next !== undefined && extended < this.next) {
      this.counters.late++;
      return "late";
    }
    if (this.packets.has(extended)) {
      this.counters.duplicate++;
      return "duplicate";
    }
    this.counters.received++;
    this.packets.set(extended, packet);
    if (this.highest === undefined || extended > this.highest) this.highest = extended;
    this.dropOverflow();
    return "accepted";
  }

  /**
   * The next frame in order, or null while (re)buffering: before the first `depthMs` has
   * arrived, and after running empty until `depthMs` has arrived again.
   */
  read(): JitterRead | null {
    if (!this.playing) {
      if (this.packets.size === 0 || this.bufferedMs < this.depthMs) return null;
      this.playing = true;
      // Sequence numbers missing across an underrun are behind us: the reader already had nulls for them.
      this.next = Math.max(this.next ?? 0, this.oldest());
    }
    if (this.packets.size === 0) {
      this.playing = false;
      this.counters.underruns++;
      return null;
    }
    const sequence = this.next!;
    this.next = sequence + 1;
    const packet = this.packets.get(sequence);
    if (packet) {
      this.packets.delete(sequence);
      const { frame, timestamp } = packet;
      this.last = frame;
      this.counters.played++;
      return { frame, sequence: sequence & 0xffff, timestamp, concealed: false };
    }
    // A gap with later packets waiting: the missing one is lost (or later than we can wait).
    const model = this.last ?? this.packets.get(this.oldest())!.frame;
    const frame = { samples: new Int16Array(model.samples.length), sampleRate: model.sampleRate };
    this.counters.concealed++;
    return { frame, sequence: sequence & 0xffff, timestamp: null, concealed: true };
  }

  private extend(sequence: number): number {
    if (!Number.isInteger(sequence) || sequence < 0 || sequence > 0xffff) throw new RangeError(`RTP sequence number out of range: ${sequence}`);
    if (this.highest === undefined) return sequence + 0x10000; // room to unwrap packets just before the first
    const delta = ((sequence - (this.highest & 0xffff) + 0x8000) & 0xffff) - 0x8000;
    return this.highest + delta;
  }

  private oldest(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const key of this.packets.keys()) if (key < oldest) oldest = key;
    return oldest;
  }

  private dropOverflow(): void {
    while (this.bufferedMs > this.maxDepthMs) {
      const oldest = this.oldest();
      this.packets.delete(oldest);
      this.counters.overflow++;
      if (this.next !== undefined) this.next = Math.max(this.next, oldest + 1);
    }
  }
}
