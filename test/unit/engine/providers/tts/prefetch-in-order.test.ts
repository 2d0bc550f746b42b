import { describe, expect, it } from "vitest";
import { prefetchInOrder } from "../../../../../engine/providers/tts/prefetch-in-order.js";

/** A promise settled by the test. */
function task<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function* from<T>(items: T[]): AsyncIterable<T> {
  yield* items;
}

/** A source the test feeds item by item. */
function source<T>() {
  const items: T[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: { error: unknown } | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(item: T) {
      items.push(item);
      poke();
    },
    end() {
      ended = true;
      poke();
    },
    fail(error: unknown) {
      failure = { error };
      poke();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (items.length > 0) yield items.shift()!;
        else if (failure) throw failure.error;
        else if (ended) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("prefetchInOrder", () => {
  it("yields results in source order even when later tasks finish first", async () => {
    const tasks = [task<string>(), task<string>(), task<string>()];
    const results = prefetchInOrder(from([0, 1, 2]), (i) => tasks[i]!.promise, {
      ahead: 3,
      signal: new AbortController().signal,
    });
    tasks[2]!.resolve("c");
    tasks[1]!.resolve("b");
    tasks[0]!.resolve("a");
    const out: string[] = [];
    for await (const result of results) out.push(result);
    expect(out).toEqual(["a", "b", "c"]);
  });

  it("starts the next task while the consumer still holds the previous result, never more than `ahead`", async () => {
    const started: number[] = [];
    const input = source<number>();
    for (const n of [1, 2, 3, 4]) input.push(n);
    input.end();
    const iterator = prefetchInOrder(input, (n) => (started.push(n), Promise.resolve(n * 10)), { ahead: 1, signal: new AbortController().signal });
    expect(await iterator.next()).toEqual({ value: 10, done: false });
    await settle();
    // Result 10 is with the consumer; only item 2 may have started since.
    expect(started).toEqual([1, 2]);
    expect(await iterator.next()).toEqual({ value: 20, done: false });
    await settle();
    expect(started).toEqual([1, 2, 3]);
    const rest: number[] = [];
    for await (const value of { [Symbol.asyncIterator]: () => iterator }) rest.push(value);
    expect(rest).toEqual([30, 40]);
  });

  it("starts a task as soon as its item arrives", async () => {
    const input = source<string>();
    const started: string[] = [];
    const iterator = prefetchInOrder(input, (s) => (started.push(s), Promise.resolve(s.toUpperCase())), { ahead: 1, signal: new AbortController().signal });
    const first = iterator.next();
    input.push("one");
    expect(await first).toEqual({ value: "ONE", done: false });
    input.push("two");
    await settle();
    expect(started).toEqual(["one", "two"]);
    input.end();
    expect(await iterator.next()).toEqual({ value: "TWO", done: false });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it("skips items for which start returns undefined", async () => {
    const input = source<string>();
    for (const s of ["a", "", "b"]) input.push(s);
    input.end();
    const out: string[] = [];
    for await (const value of prefetchInOrder(input, (s) => (s ? Promise.resolve(s) : undefined), { ahead: 1, signal: new AbortController().signal })) {
      out.push(value);
    }
    expect(out).toEqual(["a", "b"]);
  });

  it("fails at a failed task's place, after the results before it", async () => {
    const input = source<number>();
    for (const n of [1, 2, 3]) input.push(n);
    input.end();
    const out: number[] = [];
    const run = async () => {
      for await (const value of prefetchInOrder(input, (n) => (n === 2 ? Promise.reject(new Error("two failed")) : Promise.resolve(n)), {
        ahead: 2,
        signal: new AbortController().signal,
      })) {
        out.push(value);
      }
    };
    await expect(run()).rejects.toThrow("two failed");
    expect(out).toEqual([1]);
  });

  it("fails with the source's error after the results already started", async () => {
    const input = source<number>();
    input.push(1);
    input.fail(new Error("source broke"));
    const out: number[] = [];
    const run = async () => {
      for await (const value of prefetchInOrder(input, (n) => Promise.resolve(n), { ahead: 2, signal: new AbortController().signal })) out.push(value);
    };
    await expect(run()).rejects.toThrow("source broke");
    expect(out).toEqual([1]);
  });

  it("ends at once on abort, while waiting for a task or for the source", async () => {
    const controller = new AbortController();
    const pending = task<string>();
    const input = source<string>();
    input.push("x");
    const iterator = prefetchInOrder(input, () => pending.promise, { ahead: 1, signal: controller.signal });
    const next = iterator.next();
    await settle();
    controller.abort();
    expect(await next).toEqual({ value: undefined, done: true });
    pending.resolve("too late");

    const idle = new AbortController();
    const silent = prefetchInOrder(source<string>(), (s) => Promise.resolve(s), { ahead: 1, signal: idle.signal });
    const waiting = silent.next();
    await settle();
    idle.abort();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  it("ends quietly when a task fails because of the abort", async () => {
    const controller = new AbortController();
    const input = source<string>();
    input.push("x");
    const iterator = prefetchInOrder(
      input,
      () => new Promise<string>((_, reject) => controller.signal.addEventListener("abort", () => reject(controller.signal.reason))),
      { ahead: 1, signal: controller.signal },
    );
    const next = iterator.next();
    await settle();
    controller.abort();
    expect(await next).toEqual({ value: undefined, done: true });
  });
});
