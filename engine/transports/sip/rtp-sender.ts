import { randomBytes, randomInt } from "node:crypto";
import { FRAME_MS } from "../../audio/audio-frame.js";
import type { Clock } from "../../audio/clock.js";

/**
 * The outgoing RTP stream's numbering (RFC 3550): SSRC, sequence number and timestamp, all
 * starting at random values. Each packet takes the next sequence number. Within a talkspurt
 * each audio frame's timestamp follows the previous frame's samples (+160 for 20 ms at 8 kHz);
 * a talkspurt starts on the first frame, after `endTalkspurt()` (barge-in), after a DTMF event,
 * and after a pause in sending longer than `talkspurtGapMs`. Its first packet carries the
 * marker, and its timestamp moves on by the wall-clock time of the pause, in whole frames, so
 * the receiver keeps the silence where it was.
 *
 * A DTMF event reserves the media timestamp at its start; audio sent while it lasts is refused
 * (RFC 4733 forbids overlapping a tone with the audio it replaces) and audio after it goes on
 * from the end of the tone.
 */
export interface RtpSenderOptions {
  clock: Clock;
  /** Default 8000. */
  clockRate?: number;
  /** A pause in sending longer than this starts a new talkspurt (default 100 ms: longer than a late timer, shorter than any pause worth hearing). */
  talkspurtGapMs?: number;
  /** Fixed initial values, for tests; random by default. */
  ssrc?: number;
  sequence?: number;
  timestamp?: number;
}

export interface RtpNumbering {
  ssrc: number;
  sequence: number;
  timestamp: number;
  marker: boolean;
}

interface LastUnit {
  timestamp: number;
  samples: number;
  /** Clock ms when it started playing. */
  at: number;
}

export class RtpSender {
  readonly ssrc: number;
  private readonly clock: Clock;
  private readonly clockRate: number;
  private readonly talkspurtGapMs: number;
  private readonly initialTimestamp: number;
  private sequence: number;
  private last: LastUnit | undefined;
  private newTalkspurt = true;
  private event: { timestamp: number; at: number } | undefined;

  constructor(options: RtpSenderOptions) {
    this.clock = options.clock;
    this.clockRate = options.clockRate ?? 8000;
    this.talkspurtGapMs = options.talkspurtGapMs ?? 100;
    this.ssrc = options.ssrc ?? randomBytes(4).readUInt32BE(0);
    this.sequence = options.sequence ?? randomInt(0x10000);
    this.initialTimestamp = options.timestamp ?? randomBytes(4).readUInt32BE(0);
  }

  /** True while a DTMF event is being sent. */
  get inEvent(): boolean {
    return this.event !== undefined;
  }

  /** Numbers an audio packet of `samples` samples sent now; null while a DTMF event lasts. */
  audio(samples: number): RtpNumbering | null {
    if (this.event) return null;
    const now = this.clock.now();
    const last = this.last;
    const marker = this.newTalkspurt || !last || now - this.endOf(last) > this.talkspurtGapMs;
    const timestamp = marker || !last ? this.timestampAt(now) : (last.timestamp + last.samples) >>> 0;
    this.last = { timestamp, samples, at: now };
    this.newTalkspurt = false;
    return { ssrc: this.ssrc, sequence: this.nextSequence(), timestamp, marker };
  }

  /** The next frame starts a new talkspurt (marker set). */
  endTalkspurt(): void {
    this.newTalkspurt = true;
  }

  /** Starts a DTMF event now; returns its timestamp, shared by all its packets. */
  beginEvent(): number {
    if (this.event) throw new Error("a DTMF event is already being sent");
    const at = this.clock.now();
    this.event = { timestamp: this.timestampAt(at), at };
    return this.event.timestamp;
  }

  /** Numbers one packet of the current event. */
  eventPacket(marker: boolean): RtpNumbering {
    if (!this.event) throw new Error("no DTMF event is being sent");
    return { ssrc: this.ssrc, sequence: this.nextSequence(), timestamp: this.event.timestamp, marker };
  }

  /** Ends the event: the media clock goes on from the end of its tone, in a new talkspurt. */
  endEvent(durationSamples: number): void {
    const event = this.event;
    if (!event) return;
    this.last = { timestamp: event.timestamp, samples: durationSamples, at: event.at };
    this.event = undefined;
    this.newTalkspurt = true;
  }

  /** Where the media clock stands at `now`: after the last unit, plus the whole frames of any pause since it ended. */
  private timestampAt(now: number): number {
    const last = this.last;
    if (!last) return this.initialTimestamp;
    const frameSamples = (this.clockRate * FRAME_MS) / 1000;
    const pauseFrames = Math.max(0, Math.round((now - this.endOf(last)) / FRAME_MS));
    return (last.timestamp + last.samples + pauseFrames * frameSamples) >>> 0;
  }

  private endOf(unit: LastUnit): number {
    return unit.at + (unit.samples * 1000) / this.clockRate;
  }

  private nextSequence(): number {
    const sequence = this.sequence;
    this.sequence = (sequence + 1) & 0xffff;
    return sequence;
  }
}
