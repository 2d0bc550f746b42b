import { EventEmitter } from "eventemitter3";
import { durationMs, type AudioFrame } from "./audio-frame.js";
import { systemClock, type Clock, type TimerHandle } from "./clock.js";

/**
 * The outgoing audio queue: paces agent frames to the transport in real time.
 *
 * A run starts when a frame is queued while nothing is playing: its first frame goes out at
 * once (synchronously, inside `enqueue`), and frame k of the run at start + (duration of
 * frames 0..k-1). The schedule is absolute, so timer lateness never accumulates as drift; a
 * late timer sends every overdue frame at once to catch up. When the queue runs dry the run
 * ends as the last frame finishes playing (`idle`); frames queued after that start a new run.
 *
 * Barge-in: `pause()` stops sending at once and keeps the queue, `resume()` goes on from the
 * next frame (a caller's backchannel); `clear()` drops everything queued at once and says how
 * much had played (an interruption).
 */
export interface FrameClockOptions {
  clock?: Clock;
}

export interface FrameClockEvents {
  /** Send `frame` now; `atMs` is its slot on the schedule (clock ms), which a late timer may have passed. */
  frame: (frame: AudioFrame, atMs: number) => void;
  /** The queue ran dry and the last frame sent has finished playing. Not emitted by `clear()`. */
  idle: () => void;
}

export interface ClearResult {
  /** Frames that were queued and will never be sent. */
  dropped: AudioFrame[];
  droppedMs: number;
  /** `playedMs` at the moment of the clear. */
  playedMs: number;
}

interface Run {
  startMs: number;
  /** Audio sent in this run; the next slot is startMs + sentMs. */
  sentMs: number;
}

export class FrameClock extends EventEmitter<FrameClockEvents> {
  private readonly clock: Clock;
  private readonly queue: AudioFrame[] = [];
  private run: Run | undefined;
  private timer: TimerHandle | undefined;
  /** Audio played in runs that have ended. */
  private playedBeforeRunMs = 0;
  private pausedNow = false;

  constructor(options: FrameClockOptions = {}) {
    super();
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Milliseconds of audio played since this clock was made: monotonic, never reset (a turn
   * takes the difference between its start and its end or its `clear()`). Audio counts as
   * played as its slot time passes, so a frame in progress counts in part.
   */
  get playedMs(): number {
    const run = this.run;
    if (!run) return this.playedBeforeRunMs;
    return this.playedBeforeRunMs + Math.min(run.sentMs, Math.max(0, this.clock.now() - run.startMs));
  }

  /** Milliseconds of audio queued and not yet sent. */
  get queuedMs(): number {
    return this.queue.reduce((sum, frame) => sum + durationMs(frame), 0);
  }

  /** True from the first frame of a run until its `idle` (a paused clock is not playing). */
  get playing(): boolean {
    return this.run !== undefined;
  }

  /** Between `pause()` and `resume()` or `clear()`. */
  get paused(): boolean {
    return this.pausedNow;
  }

  enqueue(frame: AudioFrame): void {
    const now = this.clock.now();
    const run = this.run;
    if (run && this.queue.length === 0 && now > run.startMs + run.sentMs) {
      // The queue ran dry in the past and the timer has not told us yet: that run is over.
      this.endRun();
    }
    this.queue.push(frame);
    if (!this.run && !this.pausedNow) {
      this.run = { startMs: now, sentMs: 0 };
      this.tick();
    }
  }

  /**
   * Stops sending at once, keeping what is queued (frames queued meanwhile wait too): the run
   * ends where it was, without `idle`. Idempotent.
   */
  pause(): void {
    if (this.pausedNow) return;
    this.pausedNow = true;
    this.stopRun();
  }

  /** Sends the queued frames on from where `pause()` stopped, as a new run. */
  resume(): void {
    if (!this.pausedNow) return;
    this.pausedNow = false;
    if (this.queue.length > 0 && !this.run) {
      this.run = { startMs: this.clock.now(), sentMs: 0 };
      this.tick();
    }
  }

  /** Drops everything queued and stops the run at once (barge-in); also ends a pause. */
  clear(): ClearResult {
    const playedMs = this.playedMs;
    const dropped = this.queue.splice(0);
    this.pausedNow = false;
    this.stopRun();
    return { dropped, droppedMs: dropped.reduce((sum, frame) => sum + durationMs(frame), 0), playedMs };
  }

  /** Ends the run at once, counting what has played of it. */
  private stopRun(): void {
    const playedMs = this.playedMs;
    this.cancelTimer();
    this.run = undefined;
    this.playedBeforeRunMs = playedMs;
  }

  private tick(): void {
    this.timer = undefined;
    const run = this.run;
    if (!run) return;
    const now = this.clock.now();
    if (this.queue.length === 0) {
      this.endRun();
      return;
    }
    while (this.queue.length > 0 && run.startMs + run.sentMs <= now) {
      const frame = this.queue.shift()!;
      const atMs = run.startMs + run.sentMs;
      run.sentMs += durationMs(frame);
      this.emit("frame", frame, atMs);
      // A listener may have cleared or replaced the run.
      if (this.run !== run) return;
    }
    this.timer = this.clock.setTimeout(() => this.tick(), run.startMs + run.sentMs - now);
  }

  private endRun(): void {
    this.cancelTimer();
    const run = this.run;
    if (!run) return;
    this.playedBeforeRunMs += run.sentMs;
    this.run = undefined;
    this.emit("idle");
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
