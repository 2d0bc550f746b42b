import { describe, expect, it } from "vitest";
import { Replayable } from "../../../../engine/stream/replayable.js";

/** A source that counts its next() calls; each item is released by `release()` when `gated`, else at once. */
function countedSource<T>(items: T[], options: { gated?: boolean; failAfter?: Error } = {}) {
  let nextCalls = 0;
  let position = 0;
  const gates: Array<() => void> = [];
  const iterator: AsyncIterator<T> = {
    next: async () => {
      nextCalls++;
      if (options.gated) await new Promise<void>((resolve) => gates.push(resolve));
      if (position < items.length) return { value: items[position++]!, done: false };
      if (options.failAfter) throw options.failAfter;
      return { value: undefined, done: true };
    },
  };
  return {
    source: { [Symbol.asyncIterator]: () => iterator } as AsyncIterable<T>,
    nextCalls: () => nextCalls,
    /** Lets the oldest pending next() answer. */
    release: () => gates.shift()?.(),
    pending: () => gates.length,
  };
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("Replayable", () => {
  it("gives each of two readers in turn every item, reading the source once", async () => {
    const { source, nextCalls } = countedSource(["a", "b", "c"]);
    const replay = new Replayable(source);
    expect(await all(replay.reader())).toEqual(["a", "b", "c"]);
    expect(await all(replay.reader())).toEqual(["a", "b", "c"]);
    // Three items and the end.
    expect(nextCalls()).toBe(4);
  });

  it("gives a reader started partway the items read so far, then the rest", async () => {
    const { source, nextCalls } = countedSource([1, 2, 3, 4]);
    const replay = new Replayable(source);
    const first = replay.reader();
    expect((await first.next()).value).toBe(1);
    expect((await first.next()).value).toBe(2);
    await first.return(undefined);
    expect(await all(replay.reader())).toEqual([1, 2, 3, 4]);
    expect(nextCalls()).toBe(5);
  });

  it("shares a read in progress: a second reader waiting with the first gets every item in order, none skipped or twice", async () => {
    const { source, nextCalls, release, pending } = countedSource(["a", "b", "c"], { gated: true });
    const replay = new Replayable(source);
    const first = all(replay.reader());
    await tick();
    expect(pending()).toBe(1);
    // The first reader waits for the source's first item; the second joins that same read.
    const second = all(replay.reader());
    await tick();
    expect(pending()).toBe(1);
    expect(nextCalls()).toBe(1);
    while (pending() > 0 || nextCalls() < 4) {
      release();
      await tick();
    }
    expect(await first).toEqual(["a", "b", "c"]);
    expect(await second).toEqual(["a", "b", "c"]);
    expect(nextCalls()).toBe(4);
  });

  it("passes the source's error to the reader, after the items before it", async () => {
    const failure = new Error("the dialogue failed");
    const { source } = countedSource(["a"], { failAfter: failure });
    const replay = new Replayable(source);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const item of replay.reader()) seen.push(item);
      })(),
    ).rejects.toBe(failure);
    expect(seen).toEqual(["a"]);
  });

  it("passes the source's error to both readers waiting on the read that failed", async () => {
    const failure = new Error("lost");
    const { source, release } = countedSource<string>([], { gated: true, failAfter: failure });
    const replay = new Replayable(source);
    const first = all(replay.reader());
    const second = all(replay.reader());
    await tick();
    release();
    await expect(first).rejects.toBe(failure);
    await expect(second).rejects.toBe(failure);
  });

  it("passes the source's error to a reader started after it failed (a generator source ends quietly when asked again)", async () => {
    const failure = new Error("the dialogue failed");
    const source = (async function* () {
      yield "a";
      throw failure;
    })();
    const replay = new Replayable(source);
    await expect(all(replay.reader())).rejects.toBe(failure);
    const later: string[] = [];
    await expect(
      (async () => {
        for await (const item of replay.reader()) later.push(item);
      })(),
    ).rejects.toBe(failure);
    expect(later).toEqual(["a"]);
  });
});
