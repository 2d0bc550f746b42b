import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { abortableSleep } from "../../../src/core/abortable-sleep.js";

describe("abortableSleep", () => {
  it("leaves no listener on a long-lived signal after sleeping out its time (a dial's signal sees several sleeps)", async () => {
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) await abortableSleep(1, signal);
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("resolves when the signal aborts, not after the whole time", async () => {
    const abort = new AbortController();
    const sleeping = abortableSleep(60_000, abort.signal);
    setTimeout(() => abort.abort(), 10);
    // Settling within the test's timeout shows the minute was cut short.
    await expect(sleeping).resolves.toBeUndefined();
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(0);
  });

  it("resolves at once on a signal already aborted", async () => {
    await expect(abortableSleep(60_000, AbortSignal.abort())).resolves.toBeUndefined();
  });
});
