import { describe, expect, it } from "vitest";
import { PassLoop } from "../../../src/core/pass-loop.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` holds (at most 5 s). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await sleep(10);
  expect(done()).toBe(true);
}

describe("PassLoop", () => {
  it("runs passes only between start and stop: when woken, then again after the delay `next` gives", async () => {
    let passes = 0;
    const loop = new PassLoop({ pass: async () => void passes++, next: () => 30, onError: () => {} });
    loop.wake();
    await sleep(20);
    expect(passes).toBe(0);
    loop.start();
    await until(() => passes >= 3);
    await loop.stop();
    const stoppedAt = passes;
    await sleep(100);
    expect(passes).toBe(stoppedAt);
  });

  it("makes wake-ups during a pass one more pass right after it, never two at once", async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const loop = new PassLoop({
      pass: async () => {
        running++;
        most = Math.max(most, running);
        passes++;
        if (passes === 1) await blocked;
        running--;
      },
      next: () => 60_000,
      onError: () => {},
    });
    loop.start();
    await until(() => passes === 1);
    loop.wake();
    loop.wake();
    loop.wake();
    release();
    await until(() => passes === 2);
    await sleep(50);
    expect(passes).toBe(2);
    expect(most).toBe(1);
    await loop.stop();
  });

  it("keeps going after a pass or `next` fails, and stop waits for the pass under way", async () => {
    const errors: string[] = [];
    let passes = 0;
    let finished = false;
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const loop = new PassLoop({
      pass: async () => {
        passes++;
        if (passes === 1) throw new Error("database busy");
        await blocked;
        finished = true;
      },
      next: () => {
        if (passes === 1) throw new Error("no next");
        return 60_000;
      },
      onError: (err) => errors.push((err as Error).message),
    });
    loop.start();
    await until(() => passes === 2);
    expect(errors).toEqual(["database busy", "no next"]);
    const stopping = loop.stop();
    await sleep(20);
    expect(finished).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
  });
});
