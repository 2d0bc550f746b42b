/**
 * One provider request's cancellation, the same for every remote provider: its `signal` fires
 * when the caller's does (a barge-in, a hang-up) or when nothing came from the service for
 * `timeoutMs` (`timedOut` then says so, for a retryable time-out error). The clock runs until
 * the answer's first byte and, when the request is `touch`ed on each chunk, between later ones
 * too (a stream that stalls midway). `close` in a `finally`: it also cuts the request, so a
 * consumer that stopped reading early leaves no connection streaming.
 */
export class RequestDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private timedOutFlag = false;
  private readonly onCallerAbort: () => void;

  constructor(
    private readonly caller: AbortSignal,
    readonly timeoutMs: number,
  ) {
    this.onCallerAbort = () => this.controller.abort(caller.reason);
    caller.addEventListener("abort", this.onCallerAbort, { once: true });
    if (caller.aborted) this.controller.abort(caller.reason);
    this.timer = setTimeout(() => {
      this.timedOutFlag = true;
      this.controller.abort();
    }, timeoutMs);
  }

  /** What the request is sent with. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the service said nothing in time (not the caller's abort). */
  get timedOut(): boolean {
    return this.timedOutFlag;
  }

  /** Something came: the clock starts again for the next byte. */
  touch(): void {
    this.timer.refresh();
  }

  /** The answer has started and its pace is no longer bounded (a reply the consumer reads at its own pace). */
  stopClock(): void {
    clearTimeout(this.timer);
  }

  close(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener("abort", this.onCallerAbort);
    this.controller.abort();
  }
}
