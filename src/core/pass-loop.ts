/** The wait after `next` itself failed (a database error): not a tight loop of failures. */
const ERROR_WAIT_MS = 1_000;

/**
 * A background worker's rhythm: `pass` runs once woken, and again after the delay `next`
 * gives once a pass ends. Wake-ups during a pass make one more pass right after it, so none
 * is lost and none runs twice at once. `stop` lets the pass under way finish.
 */
export class PassLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stoppedFlag = true;

  constructor(
    private readonly options: {
      pass: () => Promise<void>;
      /** The wait before the next pass when nothing wakes the loop, in ms (asked after each pass). */
      next: () => number | Promise<number>;
      onError: (err: unknown) => void;
    },
  ) {}

  /** True until `start` and after `stop`: a pass checks it to stop early. */
  get stopped(): boolean {
    return this.stoppedFlag;
  }

  start(): void {
    this.stoppedFlag = false;
    this.wake();
  }

  /** No more passes; resolves when the one under way has finished. */
  async stop(): Promise<void> {
    this.stoppedFlag = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Asks for a pass soon (several requests make one pass). */
  wake(): void {
    if (this.stoppedFlag) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** Resolves once no pass is under way or requested (tests wait on it). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), ms);
    this.timer.unref();
  }

  private run(): void {
    this.running = this.options
      .pass()
      .catch((err: unknown) => this.options.onError(err))
      .then(async () => (this.stoppedFlag || this.again ? 0 : await this.options.next()))
      .catch((err: unknown) => {
        this.options.onError(err);
        return ERROR_WAIT_MS;
      })
      .then((wait) => {
        this.running = undefined;
        if (this.stoppedFlag) return;
        const now = this.again;
        this.again = false;
        this.schedule(now ? 0 : wait);
      });
  }
}
