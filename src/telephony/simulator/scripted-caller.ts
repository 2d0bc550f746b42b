import { EventEmitter } from "eventemitter3";
import { rms, systemClock, type AudioFrame, type CallEvent, type Clock, type MediaTransport, type TimerHandle, type TransportEvents } from "../../../engine/index.js";

const RATE = 8000;
const FRAME_MS = 20;
const FRAME = (RATE * FRAME_MS) / 1000;
/** Audio louder than this (RMS, PCM16) is speech: the agent's frames, and the lines' frames the noise level is set against. */
export const SPEECH_RMS = 300;

/** What a scripted caller says and how it behaves; every time is in ms. */
export interface ScriptedCallerOptions {
  /** The caller's lines, 8 kHz PCM16, said in order, one per agent turn. */
  lines: readonly Int16Array[];
  /** How long the agent must have been quiet after its turn before the next line (default 800). */
  pauseMs?: number;
  /**
   * Lines said over the agent: line i starts `bargeInAfterMs` after the agent STARTS its turn
   * instead of `pauseMs` after it finishes. A boolean per line, or the set of line indexes.
   */
  bargeIn?: readonly boolean[] | ReadonlySet<number>;
  /** Default 600. */
  bargeInAfterMs?: number;
  /**
   * Background white noise under everything the caller sends (its lines and the silence
   * between), at this signal-to-noise ratio in dB against the lines' speech RMS (frames louder
   * than SPEECH_RMS). Absent: no noise. Lines with no speech frame get no noise.
   */
  noiseDb?: number;
  /** Seed of the noise (default 1): the same seed gives the same noise. */
  noiseSeed?: number;
  /** However the call goes, the caller hangs up this long after `start()` (default 90 s; 0: at once). */
  maxCallMs?: number;
  /** Time source (default the system clock); tests pass a fake one. */
  clock?: Clock;
}

/** One line as the caller said and heard it; times in ms since `start()`. */
export interface CallerTurn {
  index: number;
  /** The line's first frame. */
  startedAt: number;
  /** The end of its last frame; null while it is being said. */
  endedAt: number | null;
  /**
   * The first agent frame louder than speech at or after `endedAt`: the voice-to-voice
   * latency the caller hears is `agentReplyAt - endedAt`. Null until the agent speaks.
   */
  agentReplyAt: number | null;
}

/**
 * A caller played from a script, as a MediaTransport at 8 kHz (a phone line): it sends 20 ms
 * frames in real time (silence, or its current line, with optional background noise), listens
 * to the agent, says its next line once the agent has finished its turn (or, for a barge-in
 * line, while the agent is speaking), records when each line was said and answered, and hangs
 * up after its last line has been answered, at `maxCallMs`, or when the call closes it.
 *
 * The agent's turn that a line follows is the agent's speech after the previous line ended
 * (for the first line, the agent's first audio, its greeting): audio the agent sends while
 * the caller is still talking does not count as an answer.
 */
export class ScriptedCaller extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "simulator";
  readonly inputSampleRate = RATE;
  readonly outputSampleRate = RATE;
  /** Transfers the agent asked for (the simulator records the hand-off). */
  readonly transfers: Array<string | null> = [];
  private readonly lines: readonly Int16Array[];
  private readonly pauseMs: number;
  private readonly bargeIn: ReadonlySet<number>;
  private readonly bargeInAfterMs: number;
  private readonly maxCallMs: number;
  private readonly clock: Clock;
  private readonly noise: WhiteNoise | null;
  private readonly said: CallerTurn[] = [];
  /** The line being said, and how many of its samples are out. */
  private speech: { line: Int16Array; turn: CallerTurn; sent: number } | null = null;
  private firstAgentAudio: number | null = null;
  /** When the agent's last loud frame finished playing (ms since start). */
  private agentQuietSince: number | null = null;
  private startedAt: number;
  /** Slot of the next frame, ms since start. */
  private nextFrameAt = 0;
  private timer: TimerHandle | undefined;
  /** Hung up, or closed by the call. */
  private ended = false;

  constructor(options: ScriptedCallerOptions) {
    super();
    this.lines = options.lines;
    this.pauseMs = nonNegative("pauseMs", options.pauseMs ?? 800);
    this.bargeInAfterMs = nonNegative("bargeInAfterMs", options.bargeInAfterMs ?? 600);
    this.maxCallMs = nonNegative("maxCallMs", options.maxCallMs ?? 90_000);
    this.bargeIn = bargeInSet(options.bargeIn);
    this.clock = options.clock ?? systemClock;
    this.noise = options.noiseDb === undefined ? null : noiseFor(this.lines, options.noiseDb, options.noiseSeed ?? 1);
    this.startedAt = this.clock.now();
  }

  /** Starts the line: frames flow from now on. */
  start(): void {
    this.startedAt = this.clock.now();
    this.nextFrameAt = 0;
    this.tick();
  }

  get closed(): boolean {
    return this.ended;
  }

  /** The lines said so far (copies), in order. */
  turns(): CallerTurn[] {
    return this.said.map((turn) => ({ ...turn }));
  }

  /** When the caller first heard the agent speak (ms since start), or null. */
  get agentFirstAudioAt(): number | null {
    return this.firstAgentAudio;
  }

  sendAudio(frame: AudioFrame): void {
    if (rms(frame.samples) * 32768 <= SPEECH_RMS) return;
    const at = this.clock.now() - this.startedAt;
    this.firstAgentAudio ??= at;
    this.agentQuietSince = at + (frame.samples.length * 1000) / frame.sampleRate;
    const last = this.said.at(-1);
    if (last && last.endedAt !== null && last.agentReplyAt === null && at >= last.endedAt) last.agentReplyAt = at;
  }

  clearAudio(): void {}

  sendMark(name: string): void {
    queueMicrotask(() => this.emit("mark", name));
  }

  sendEvent(event: CallEvent): void {
    if (event.type === "transfer") this.transfers.push(event.number);
  }

  close(): void {
    this.ended = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sends every frame whose slot has come, deciding at each slot whether to speak or hang up. */
  private tick(): void {
    this.timer = undefined;
    const now = this.clock.now() - this.startedAt;
    while (!this.ended && this.nextFrameAt <= now) {
      this.decide(this.nextFrameAt);
      if (this.ended) return;
      this.emit("audio", { samples: this.nextFrame(this.nextFrameAt), sampleRate: RATE });
      this.nextFrameAt += FRAME_MS;
    }
    if (this.ended) return;
    this.timer = this.clock.setTimeout(() => this.tick(), this.startedAt + this.nextFrameAt - this.clock.now());
  }

  /** At slot `at`: hang up, start the next line, or go on as before. */
  private decide(at: number): void {
    if (at >= this.maxCallMs) return this.hangUp();
    if (this.speech) return;
    // The start of the agent's turn after the last line (after the call start before any line).
    const last = this.said.at(-1);
    const agentTurnAt = last ? last.agentReplyAt : this.firstAgentAudio;
    if (agentTurnAt === null) return;
    const agentDone = this.agentQuietSince !== null && at - this.agentQuietSince >= this.pauseMs;
    const index = this.said.length;
    if (index >= this.lines.length) {
      if (agentDone) this.hangUp();
      return;
    }
    const due = this.bargeIn.has(index) ? at - agentTurnAt >= this.bargeInAfterMs : agentDone;
    if (!due) return;
    const turn: CallerTurn = { index, startedAt: at, endedAt: null, agentReplyAt: null };
    this.said.push(turn);
    this.speech = { line: this.lines[index]!, turn, sent: 0 };
  }

  private nextFrame(at: number): Int16Array {
    const frame = new Int16Array(FRAME);
    const speech = this.speech;
    if (speech) {
      const part = speech.line.subarray(speech.sent, speech.sent + FRAME);
      frame.set(part);
      speech.sent += part.length;
      if (speech.sent >= speech.line.length) {
        speech.turn.endedAt = at + (part.length * 1000) / RATE;
        this.speech = null;
      }
    }
    this.noise?.addTo(frame);
    return frame;
  }

  private hangUp(): void {
    this.close();
    this.emit("hangup", "callee_hangup");
  }
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number of ms`);
  return value;
}

function bargeInSet(bargeIn: ScriptedCallerOptions["bargeIn"]): ReadonlySet<number> {
  if (!bargeIn) return new Set();
  if (Array.isArray(bargeIn)) return new Set(bargeIn.flatMap((on, index) => (on ? [index] : [])));
  return bargeIn as ReadonlySet<number>;
}

/** The lines' speech RMS (PCM16 units) over their 20 ms frames louder than SPEECH_RMS; 0 when none is. */
export function speechRms(lines: readonly Int16Array[]): number {
  let sum = 0;
  let count = 0;
  for (const line of lines) {
    for (let offset = 0; offset < line.length; offset += FRAME) {
      const frame = line.subarray(offset, offset + FRAME);
      if (rms(frame) * 32768 <= SPEECH_RMS) continue;
      for (const sample of frame) sum += sample * sample;
      count += frame.length;
    }
  }
  return count === 0 ? 0 : Math.sqrt(sum / count);
}

function noiseFor(lines: readonly Int16Array[], snrDb: number, seed: number): WhiteNoise | null {
  if (!Number.isFinite(snrDb)) throw new RangeError("noiseDb must be a finite number of dB");
  const level = speechRms(lines) / 10 ** (snrDb / 20);
  return level > 0 ? new WhiteNoise(level, seed) : null;
}

/** Seeded Gaussian white noise at a given RMS, added to frames with clipping to int16. */
class WhiteNoise {
  private state: number;
  private spare: number | null = null;

  constructor(
    private readonly level: number,
    seed: number,
  ) {
    this.state = seed >>> 0;
  }

  addTo(frame: Int16Array): void {
    for (let i = 0; i < frame.length; i++) {
      const value = Math.round(frame[i]! + this.gaussian() * this.level);
      frame[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
    }
  }

  /** Standard normal, Box-Muller over mulberry32. */
  private gaussian(): number {
    if (this.spare !== null) {
      const spare = this.spare;
      this.spare = null;
      return spare;
    }
    const u = 1 - this.uniform();
    const v = this.uniform();
    const radius = Math.sqrt(-2 * Math.log(u));
    this.spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  }

  /** mulberry32: a small, well-mixed 32-bit generator, in [0, 1). */
  private uniform(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
