import { Resampler, systemClock } from "../../engine/index.js";
import type { AudioFrame, Clock, MediaTransport, TimerHandle } from "../../engine/index.js";
import { LineWrapper } from "./line-wrapper.js";

/** Listeners hear the call at this rate, whatever the line's rates. */
export const LISTEN_SAMPLE_RATE = 16_000;
const FRAME_MS = 20;
const LISTEN_FRAME_SAMPLES = (LISTEN_SAMPLE_RATE * FRAME_MS) / 1000;
/** Audio a side may hold for listeners; a side that bursts loses its oldest audio beyond this. */
const LISTEN_BUFFER_MS = 200;
/** Supervisor audio waiting to be paced out to the caller; what does not fit is dropped. */
const TAKE_OVER_BUFFER_MS = 2_000;
/** A late timer sends at most this many overdue frames at once, then the schedule starts over. */
const MAX_CATCH_UP_FRAMES = 10;

/** Someone listening to a call (a supervisor's WebSocket). */
export interface LineListener {
  /**
   * `false`: one 20 ms frame of caller and agent mixed (320 samples). `true`: caller left,
   * agent right, interleaved (640 samples). Both 16 kHz PCM16.
   */
  readonly stereo: boolean;
  /** Called every 20 ms while subscribed, with a frame of its own. Throwing unsubscribes it. */
  onAudio(pcm: Int16Array): void;
  /** No more frames will come: the line closed or hung up, or `onAudio` threw. Not called on unsubscribe. */
  onEnd?(): void;
}

/** A supervisor speaking to the caller in the agent's place, until `end()`. */
export interface TakeOver {
  /** 16 kHz PCM16 of any length, played to the caller in real time after what was sent before. */
  send(pcm16k: Int16Array): void;
  /** Gives the line back to the agent; audio not yet played is dropped. Idempotent. */
  end(): void;
}

export interface SupervisedLineOptions {
  clock?: Clock;
}

/**
 * A media connection handed to a call session so that supervisors can listen to the call and
 * take it over (live supervision). Everything passes through between the session and the line
 * except, while taken over, the agent's audio and its `clearAudio`: the caller hears the
 * supervisor instead.
 *
 * Listeners are fed on a 20 ms clock of their own, because the caller's frames (`audio`) and
 * the agent's (`sendAudio`) arrive unsynchronised: each side is resampled to 16 kHz into a
 * bounded buffer and every tick takes 20 ms from each. No timer runs and nothing is buffered
 * while nobody listens or nothing of a take-over waits to be played.
 */
export class SupervisedLine extends LineWrapper {
  private readonly clock: Clock;
  private readonly audioListeners = new Set<LineListener>();
  private readonly callerSide = new ListenedSide();
  private readonly agentSide = new ListenedSide();
  private readonly mixer: FrameTicker;
  private takeOverNow: SupervisorVoice | undefined;
  private finished = false;

  constructor(line: MediaTransport, options: SupervisedLineOptions = {}) {
    super(line);
    this.clock = options.clock ?? systemClock;
    this.mixer = new FrameTicker(this.clock, () => this.mix());
  }

  protected override fromLine(frame: AudioFrame): void {
    if (this.audioListeners.size > 0) this.callerSide.push(frame);
    super.fromLine(frame);
  }

  protected override lineHungUp(reason: string): void {
    this.finish();
    super.lineHungUp(reason);
  }

  override get closed(): boolean {
    return this.finished || this.line.closed;
  }
  /** A supervisor has the line: the agent's audio does not reach the caller. */
  get takenOver(): boolean {
    return this.takeOverNow !== undefined;
  }
  /** Listeners subscribed now. */
  get listenerTotal(): number {
    return this.audioListeners.size;
  }

  override sendAudio(frame: AudioFrame): void {
    if (this.takeOverNow) return;
    this.line.sendAudio(frame);
    if (this.audioListeners.size > 0) this.agentSide.push(frame);
  }
  override clearAudio(): void {
    // The agent's barge-in must not cut the supervisor's words short.
    if (!this.takeOverNow) this.line.clearAudio();
  }
  override close(reason: string): void {
    this.finish();
    this.line.close(reason);
  }

  /**
   * Subscribes `listener` to the call's audio; returns its unsubscribe. On a closed line it
   * gets `onEnd` at once and nothing else.
   */
  listen(listener: LineListener): () => void {
    if (this.closed) {
      safely(() => listener.onEnd?.());
      return () => {};
    }
    this.audioListeners.add(listener);
    if (!this.mixer.running) this.mixer.start(FRAME_MS);
    return () => this.unsubscribe(listener);
  }

  /**
   * A supervisor takes the line: the caller's queued agent audio is cleared, the agent's
   * frames are dropped from now on and the supervisor's audio goes to the caller (and to
   * listeners as the agent's side) until `end()` or the line closes. Throws if the line is
   * closed or already taken over.
   */
  takeOver(): TakeOver {
    if (this.closed) throw new Error("the line is closed");
    if (this.takeOverNow) throw new Error("the line is already taken over");
    const voice = new SupervisorVoice(this.clock, this.line.outputSampleRate, (frame) => {
      this.line.sendAudio(frame);
      if (this.audioListeners.size > 0) this.agentSide.push(frame);
    });
    this.takeOverNow = voice;
    this.line.clearAudio();
    return {
      send: (pcm16k) => {
        if (this.takeOverNow === voice) voice.send(pcm16k);
      },
      end: () => {
        if (this.takeOverNow !== voice) return;
        voice.stop();
        this.takeOverNow = undefined;
      },
    };
  }

  private unsubscribe(listener: LineListener): void {
    if (!this.audioListeners.delete(listener) || this.audioListeners.size > 0) return;
    this.mixer.stop();
    this.callerSide.clear();
    this.agentSide.clear();
  }

  /** One tick of the listeners' clock; false once nobody listens. */
  private mix(): boolean {
    const caller = this.callerSide.take();
    const agent = this.agentSide.take();
    let mono: Int16Array | undefined;
    let stereo: Int16Array | undefined;
    for (const listener of [...this.audioListeners]) {
      if (!this.audioListeners.has(listener)) continue; // an earlier listener's callback removed it
      // A copy each: a listener may keep its frame (a socket's send queue) or change it.
      const frame = listener.stereo ? (stereo ??= interleave(caller, agent)) : (mono ??= sum(caller, agent));
      try {
        listener.onAudio(frame.slice());
      } catch {
        this.unsubscribe(listener);
        safely(() => listener.onEnd?.());
      }
    }
    return this.audioListeners.size > 0;
  }

  /** The line is over: the take-over ends, listeners are told, every timer stops. */
  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.detach();
    this.takeOverNow?.stop();
    this.takeOverNow = undefined;
    const listeners = [...this.audioListeners];
    this.audioListeners.clear();
    this.mixer.stop();
    this.callerSide.clear();
    this.agentSide.clear();
    for (const listener of listeners) safely(() => listener.onEnd?.());
  }
}

/** The supervisor's audio on its way to the caller: resampled, queued (2 s at most), paced one 20 ms frame per tick. */
class SupervisorVoice {
  private readonly resampler: Resampler;
  private readonly queue: SampleQueue;
  private readonly frameSamples: number;
  private readonly ticker: FrameTicker;
  /** The queue held only part of a frame at the last tick (it gets one tick to fill up). */
  private waited = false;

  constructor(
    clock: Clock,
    private readonly outputRate: number,
    private readonly sendFrame: (frame: AudioFrame) => void,
  ) {
    this.resampler = new Resampler({ inputRate: LISTEN_SAMPLE_RATE, outputRate });
    this.frameSamples = (outputRate * FRAME_MS) / 1000;
    this.queue = new SampleQueue((outputRate * TAKE_OVER_BUFFER_MS) / 1000);
    this.ticker = new FrameTicker(clock, () => this.tick());
  }

  send(pcm16k: Int16Array): void {
    // Beyond 2 s the newest audio is dropped: what is queued keeps playing whole. Only what
    // can fit is resampled, so a huge chunk costs no more than 2 s of audio.
    const room = this.queue.capacity - this.queue.length;
    if (room === 0) return;
    const fits = Math.ceil((room * LISTEN_SAMPLE_RATE) / this.outputRate) + 1;
    this.queue.pushDroppingNewest(this.resampler.push(pcm16k.length > fits ? pcm16k.subarray(0, fits) : pcm16k));
    if (!this.ticker.running && this.queue.length > 0) this.ticker.start(0);
  }

  stop(): void {
    this.ticker.stop();
    this.queue.clear();
    this.resampler.reset();
  }

  private tick(): boolean {
    const samples = this.takeFrame();
    if (samples === null) return this.queue.length > 0;
    this.sendFrame({ samples, sampleRate: this.outputRate });
    return true;
  }

  private takeFrame(): Int16Array | null {
    if (this.queue.length >= this.frameSamples) {
      this.waited = false;
      return this.queue.take(this.frameSamples);
    }
    if (this.queue.length === 0 || !this.waited) {
      this.waited = this.queue.length > 0;
      return null;
    }
    this.waited = false;
    return this.queue.take(this.frameSamples);
  }
}

/** One side of the call as listeners hear it: 16 kHz, at most 200 ms, oldest dropped first. */
class ListenedSide {
  private resampler: Resampler | undefined;
  private readonly queue = new SampleQueue((LISTEN_SAMPLE_RATE * LISTEN_BUFFER_MS) / 1000);
  private waited = false;

  push(frame: AudioFrame): void {
    if (frame.sampleRate === LISTEN_SAMPLE_RATE) {
      this.queue.pushDroppingOldest(frame.samples);
      return;
    }
    if (this.resampler?.inputRate !== frame.sampleRate) {
      this.resampler = new Resampler({ inputRate: frame.sampleRate, outputRate: LISTEN_SAMPLE_RATE });
    }
    this.queue.pushDroppingOldest(this.resampler.push(frame.samples));
  }

  /**
   * The next 20 ms: silence when the side has nothing. Less than 20 ms waits one tick for the
   * rest (frames that arrive just after the tick, or the resampler's held-back tail, would
   * otherwise put a gap of silence inside every frame), then goes out padded with silence.
   */
  take(): Int16Array {
    const queued = this.queue.length;
    if (queued >= LISTEN_FRAME_SAMPLES || (queued > 0 && this.waited)) {
      this.waited = false;
      return this.queue.take(LISTEN_FRAME_SAMPLES);
    }
    this.waited = queued > 0;
    return new Int16Array(LISTEN_FRAME_SAMPLES);
  }

  clear(): void {
    this.queue.clear();
    this.resampler = undefined;
    this.waited = false;
  }
}

/** PCM16 samples in arrival order, in a fixed capacity. */
class SampleQueue {
  private readonly samples: Int16Array;
  length = 0;

  constructor(capacity: number) {
    this.samples = new Int16Array(capacity);
  }

  get capacity(): number {
    return this.samples.length;
  }

  pushDroppingOldest(chunk: Int16Array): void {
    const capacity = this.samples.length;
    if (chunk.length >= capacity) {
      this.samples.set(chunk.subarray(chunk.length - capacity));
      this.length = capacity;
      return;
    }
    const overflow = this.length + chunk.length - capacity;
    if (overflow > 0) {
      this.samples.copyWithin(0, overflow, this.length);
      this.length -= overflow;
    }
    this.samples.set(chunk, this.length);
    this.length += chunk.length;
  }

  pushDroppingNewest(chunk: Int16Array): void {
    const fits = Math.min(chunk.length, this.samples.length - this.length);
    this.samples.set(chunk.subarray(0, fits), this.length);
    this.length += fits;
  }

  /** The oldest `count` samples, padded with silence when fewer are queued. */
  take(count: number): Int16Array {
    const out = new Int16Array(count);
    const taken = Math.min(count, this.length);
    out.set(this.samples.subarray(0, taken));
    this.samples.copyWithin(0, taken, this.length);
    this.length -= taken;
    return out;
  }

  clear(): void {
    this.length = 0;
  }
}

/**
 * Calls `onTick` every 20 ms on an absolute schedule (timer lateness does not drift) until it
 * returns false or `stop()`. A late timer runs the overdue ticks at once, up to 10; beyond
 * that the schedule starts over from now.
 */
class FrameTicker {
  private timer: TimerHandle | undefined;
  private nextAt = 0;
  private active = false;
  /** Counts starts and stops: a tick whose callback stopped (and maybe restarted) the ticker stops looping. */
  private generation = 0;

  constructor(
    private readonly clock: Clock,
    private readonly onTick: () => boolean,
  ) {}

  get running(): boolean {
    return this.active;
  }

  /** The first tick `firstDelayMs` from now (0: at once, inside this call). */
  start(firstDelayMs: number): void {
    if (this.active) return;
    this.active = true;
    this.generation++;
    this.nextAt = this.clock.now() + firstDelayMs;
    if (firstDelayMs <= 0) this.tick();
    else this.schedule();
  }

  stop(): void {
    this.active = false;
    this.generation++;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    this.timer = undefined;
    const now = this.clock.now();
    const generation = this.generation;
    for (let ticks = 0; this.nextAt <= now; ticks++) {
      if (ticks === MAX_CATCH_UP_FRAMES) {
        this.nextAt = now + FRAME_MS;
        break;
      }
      this.nextAt += FRAME_MS;
      const goOn = this.onTick();
      if (this.generation !== generation) return; // stopped (or restarted) from inside onTick
      if (!goOn) {
        this.stop();
        return;
      }
    }
    this.schedule();
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => this.tick(), this.nextAt - this.clock.now());
  }
}

function sum(caller: Int16Array, agent: Int16Array): Int16Array {
  const out = new Int16Array(caller.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.max(-32768, Math.min(32767, caller[i]! + agent[i]!));
  return out;
}

function interleave(caller: Int16Array, agent: Int16Array): Int16Array {
  const out = new Int16Array(caller.length * 2);
  for (let i = 0; i < caller.length; i++) {
    out[2 * i] = caller[i]!;
    out[2 * i + 1] = agent[i]!;
  }
  return out;
}

/** Runs a listener's callback whose failure must not reach the call. */
function safely(callback: () => void): void {
  try {
    callback();
  } catch {
    // The listener is gone either way.
  }
}
