import type { Clock, TimerHandle } from "../audio/clock.js";

/** Said before the call is hung up for silence. */
export const SILENCE_TIMEOUT_LINE = "I haven't heard anything for a while, so I'll end the call now. Goodbye.";
/** How long the silence goodbye may take before the call is hung up anyway. */
export const SILENCE_GOODBYE_MAX_MS = 10_000;

/** What the silence watch needs of the call it belongs to. */
export interface SilenceWatchHost {
  /** The call is ending or saying its closing line: silence no longer matters. */
  isOver(): boolean;
  /** Someone is speaking (or the agent prepares a reply): nobody is silent. */
  isBusy(): boolean;
  /** Both sides have been silent for the whole timeout: the call says goodbye and hangs up. */
  silent(): void;
}

/**
 * Silence on both sides (no caller speech, no agent audio) for `timeoutMs` ends the call: a
 * caller who is gone, or a socket held open and mute, must not keep a recognizer and a slot.
 * Checked every time the silence could have run out, not on every frame.
 */
export class SilenceWatch {
  /** Last moment either side was heard: silence counts from here. */
  private lastHeardAt = 0;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    /** 0: the call is never ended for silence. */
    private readonly timeoutMs: number,
    private readonly host: SilenceWatchHost,
  ) {}

  /** Silence counts from `atMs`, the call's start. */
  start(atMs: number): void {
    this.lastHeardAt = atMs;
    if (this.timeoutMs) this.arm(this.timeoutMs);
  }

  /** One side was heard at `atMs` (a voiced caller frame, a key, an agent frame sent). */
  heard(atMs: number): void {
    this.lastHeardAt = atMs;
  }

  /** The call has ended. */
  stop(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** While someone speaks (or the agent prepares a reply) the count starts again from now. */
  private arm(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => {
      if (this.host.isOver()) return;
      const now = this.clock.now();
      if (this.host.isBusy()) this.lastHeardAt = now;
      const quietMs = now - this.lastHeardAt;
      if (quietMs >= this.timeoutMs) this.host.silent();
      else this.arm(this.timeoutMs - quietMs);
    }, delayMs);
  }
}
