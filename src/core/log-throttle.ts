/**
 * Lets one log line through per interval and counts the ones held back meanwhile, so a flood of
 * one event (a refused SIP source sending thousands of requests) cannot fill the disk.
 */
export class LogThrottle {
  private lastAt = Number.NEGATIVE_INFINITY;
  private held = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Undefined: stay quiet. A number: write the line now; that many were held back since the last one. */
  take(): number | undefined {
    const now = this.now();
    if (now - this.lastAt < this.intervalMs) {
      this.held++;
      return undefined;
    }
    this.lastAt = now;
    const held = this.held;
    this.held = 0;
    return held;
  }
}
