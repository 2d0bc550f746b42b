/**
 * One async iterable read once, for several readers: each reader gets every item from the
 * first (those read so far from memory, then the source's next ones as they come). A provider
 * chain hands the next provider the same utterance or the same sentences after the first
 * failed partway; the failed one's reader may still be waiting, so reads of the source are
 * shared, never made twice at once.
 */
export class Replayable<T> {
  private readonly items: T[] = [];
  private readonly source: AsyncIterator<T>;
  private done = false;
  /** The source's failure, kept: asked again, a failed source (a generator) may just say it is done. */
  private failure: { error: unknown } | undefined;
  private reading: Promise<void> | undefined;

  constructor(source: AsyncIterable<T>) {
    this.source = source[Symbol.asyncIterator]();
  }

  /** Whether the source failed (a reader's failure may be its input's, not its own). */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Resolves once the first item is there, or the source has ended or failed. */
  async first(): Promise<void> {
    while (this.items.length === 0 && !this.done && !this.failure) await this.readMore().catch(() => {});
  }

  async *reader(): AsyncGenerator<T> {
    for (let i = 0; ; i++) {
      while (i >= this.items.length) {
        if (this.failure) throw this.failure.error;
        if (this.done) return;
        await this.readMore();
      }
      yield this.items[i]!;
    }
  }

  private readMore(): Promise<void> {
    this.reading ??= this.source.next().then(
      (next) => {
        this.reading = undefined;
        if (next.done) this.done = true;
        else this.items.push(next.value);
      },
      (error: unknown) => {
        this.reading = undefined;
        this.failure = { error };
        throw error;
      },
    );
    return this.reading;
  }
}
