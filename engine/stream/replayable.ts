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
  private reading: Promise<void> | undefined;

  constructor(source: AsyncIterable<T>) {
    this.source = source[Symbol.asyncIterator]();
  }

  async *reader(): AsyncGenerator<T> {
    for (let i = 0; ; i++) {
      while (i >= this.items.length) {
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
        throw error;
      },
    );
    return this.reading;
  }
}
