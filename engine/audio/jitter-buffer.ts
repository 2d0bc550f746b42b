import { durationMs, type AudioFrame } from "./audio-frame.js";

/**
 * Receive-side jitter buffer for RTP audio: packets go in as they arrive (out of order,
 * duplicated, late); a reader calls `read()` once per frame period and gets frames back in
 * sequence order, `depthMs` behind the newest audio.
 *
 * Order, loss and lateness come from the 16-bit sequence number (extended across wrap-around
 * at 65535, as RFC 3550 receivers do); a packet behind the playout point (a copy of one already
 * played included) is late. Timestamps are not used to reorder, and a timestamp jump is not
 * expanded into silence: the reader keeps time (it reads every frame period whether or not
 * there is audio). Each missing sequence number becomes one silence frame as long as the last
 * frame played. When the buffer runs empty it buffers again up to `depthMs` before playing on;
 * when it holds more than `maxDepthMs` it skips the oldest audio to bound latency.
 *
 * Silence suppression (DTX): the far end stops sending during pauses (or sends comfort noise,
 * which never reaches this buffer but uses up sequence numbers), then starts a new talkspurt:
 * marker bit set, timestamp ahead by the pause. A talkspurt start re-primes the buffer: the
 * sequence numbers skipped before it are the pause, not loss, so they are not concealed, and
 * playout waits until `depthMs` is buffered again, stretching the pause instead of carrying a
 * depth the pause used up into the new talkspurt. Nothing is flushed: packets of the previous
 * talkspurt still waiting are the end of the speaker's words and play first.
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
  /** RTP timestamp, in samples of `frame` (G.711: 8000 Hz); carried through, and compared to spot a talkspurt start. */
  timestamp: number;
  /** The RTP marker bit: for audio, the first packet of a talkspurt. */
  marker?: boolean;
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
  /** Times the buffer ran empty while playing (the pauses of a silence-suppressed stream included). */
  underruns: number;
  /** Talkspurts started after the first (marker bit or timestamp jump): the far end suppresses silence. */
  talkspurts: number;
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
  /** The last packet played, where the next talkspurt's timestamp jump is measured from. */
  private lastPlayed: { sequence: number; timestamp: number; samples: number } | undefined;
  private readonly counters: JitterBufferStats = { received: 0, played: 0, concealed: 0, late: 0, duplicate: 0, overflow: 0, underruns: 0, talkspurts: 0 };

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
    if (this.playing && this.packets.size > 0) {
      const upcoming = this.packets.has(this.next!) ? this.next! : this.oldest();
      if (this.startsTalkspurt(upcoming)) {
        // Re-prime (see above); a talkspurt found this way starts from this not-playing state.
        this.next = upcoming;
        this.playing = false;
      }
    }
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
      if (this.startsTalkspurt(sequence)) this.counters.talkspurts++;
      this.packets.delete(sequence);
      const { frame, timestamp } = packet;
      this.last = frame;
      this.lastPlayed = { sequence, timestamp, samples: frame.samples.length };
      this.counters.played++;
      return { frame, sequence: sequence & 0xffff, timestamp, concealed: false };
    }
    // A gap with later packets waiting: the missing one is lost (or later than we can wait).
    const model = this.last ?? this.packets.get(this.oldest())!.frame;
    const frame = { samples: new Int16Array(model.samples.length), sampleRate: model.sampleRate };
    this.counters.concealed++;
    return { frame, sequence: sequence & 0xffff, timestamp: null, concealed: true };
  }

  /**
   * Whether the waiting packet `sequence` opens a new talkspurt: its marker bit is set, or its
   * timestamp is at least a frame further past the last packet played than the sequence numbers
   * between them account for (the marker packet was lost). The stream's first packet does not
   * count: there is nothing before it to re-prime after.
   */
  private startsTalkspurt(sequence: number): boolean {
    const last = this.lastPlayed;
    const packet = this.packets.get(sequence);
    if (!last || !packet) return false;
    if (packet.marker) return true;
    const elapsed = (packet.timestamp - last.timestamp) >>> 0;
    const expected = (sequence - last.sequence) * last.samples;
    return elapsed < 0x80000000 && elapsed - expected >= last.samples;
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
