/**
 * A push-driven AsyncIterable: producers `push` and `end`, one consumer iterates. The engine's
 * one stream primitive for feeding providers (ASR audio, TTS sentences).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private failure: { error: unknown } | undefined;
  private waitingReject: ((error: unknown) => void) | undefined;
  private ended = false;

  get isEnded(): boolean {
    return this.ended;
  }

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = this.waitingReject = undefined;
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** No more items: the consumer finishes after the queued ones. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waiting && this.items.length === 0) {
      const resolve = this.waiting;
      this.waiting = this.waitingReject = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  /** Ends with an error the consumer sees after the queued items. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = { error };
    this.ended = true;
    if (this.waitingReject && this.items.length === 0) {
      const reject = this.waitingReject;
      this.waiting = this.waitingReject = undefined;
      reject(error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
        if (this.failure) return Promise.reject(this.failure.error);
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.waitingReject = reject;
        });
      },
      return: () => {
        this.ended = true;
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
