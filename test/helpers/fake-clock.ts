import type { Clock, TimerHandle } from "../../engine/audio/clock.js";

/** A clock that only moves when told to; timers fire in time order during `advance`. */
export class FakeClock implements Clock {
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers at their own times. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      let dueId: number | undefined;
      let dueAt = Number.POSITIVE_INFINITY;
      for (const [id, timer] of this.timers) {
        if (timer.at <= until && timer.at < dueAt) {
          dueId = id;
          dueAt = timer.at;
        }
      }
      if (dueId === undefined) break;
      const timer = this.timers.get(dueId)!;
      this.timers.delete(dueId);
      this.time = Math.max(this.time, timer.at);
      timer.callback();
    }
    this.time = until;
  }

  /** Jumps time forward without firing anything (an event loop that stalled). */
  stall(ms: number): void {
    this.time += ms;
  }
}
