/**
 * Caller audio may arrive at most this many times faster than real time, on average since the
 * call started, plus INPUT_BURST_ALLOWANCE_MS: a caller past that is not a phone line or a
 * microphone but a client flooding the engine, and the call is ended (`audio_overrun`).
 */
export const MAX_INPUT_REALTIME_FACTOR = 2;
/** Audio that may arrive ahead of the clock at once: a network stall followed by the backlog, a large first frame. */
export const INPUT_BURST_ALLOWANCE_MS = 5000;
/**
 * Caller audio waiting for the VAD (and through it the recognizer) is bounded to this much;
 * past it, arriving frames are dropped: the engine has fallen behind (overload), and queuing
 * more would only grow memory and the delay.
 */
export const MAX_QUEUED_INPUT_MS = 3000;

/** What to do with an arriving caller frame. */
export type InputVerdict = "accept" | "drop" | "overrun";

/** Keeps one call's caller audio within real time (on average) and its queue bounded. */
export class CallerInputBudget {
  private receivedMs = 0;
  private queuedMs = 0;

  /** A frame of `frameMs` arrives `elapsedMs` after the call started; "accept" queues it (call `dequeued` when it is taken). */
  admit(frameMs: number, elapsedMs: number): InputVerdict {
    this.receivedMs += frameMs;
    if (this.receivedMs > MAX_INPUT_REALTIME_FACTOR * elapsedMs + INPUT_BURST_ALLOWANCE_MS) return "overrun";
    if (this.queuedMs + frameMs > MAX_QUEUED_INPUT_MS) return "drop";
    this.queuedMs += frameMs;
    return "accept";
  }

  dequeued(frameMs: number): void {
    this.queuedMs -= frameMs;
  }
}
