/**
 * Time for pacing: a monotonic millisecond clock plus one-shot timers. Injected wherever time
 * drives behaviour so tests can run on a fake clock.
 */
export interface Clock {
  /** Monotonic milliseconds (any origin). */
  now(): number;
  /** Calls `callback` once, `delayMs` from now (negative delays run as soon as possible). */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque timer identity: only the clock that made it can cancel it. */
export type TimerHandle = unknown;

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, Math.max(0, delayMs)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
