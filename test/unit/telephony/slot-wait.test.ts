import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/core/api-error.js";
import { EngineShare } from "../../../src/telephony/engine-share.js";
import { waitForSlot } from "../../../src/telephony/slot-wait.js";

/** An engine of one slot and a single account; `attempts` counts the admissions asked for. */
function oneSlotEngine() {
  const engine = new EngineShare({ capacity: 1, sharePercent: 50, countAccounts: async () => 1 });
  const counted = { attempts: 0 };
  const admit = () => {
    counted.attempts++;
    return engine.take("acct_a");
  };
  return { engine, admit, counted };
}

describe("waiting for a call slot (a test run's scenario on a full engine)", () => {
  it("gets the slot once a call ends, having asked again while the engine was full", async () => {
    const { engine, admit, counted } = oneSlotEngine();
    const held = await engine.take("acct_a");
    setTimeout(() => held.release(), 100);
    const slot = await waitForSlot(admit, { waitMs: 60_000, retryMs: 10, signal: new AbortController().signal });
    expect(engine.held()).toBe(1);
    expect(counted.attempts).toBeGreaterThan(1);
    slot.release();
    expect(engine.held()).toBe(0);
  });

  it("gives up with the engine's 503 when no slot frees within the wait", async () => {
    const { engine, admit, counted } = oneSlotEngine();
    await engine.take("acct_a");
    await expect(waitForSlot(admit, { waitMs: 100, retryMs: 10, signal: new AbortController().signal })).rejects.toMatchObject({ status: 503, code: "engine_at_capacity" });
    expect(counted.attempts).toBeGreaterThan(1);
    expect(engine.held()).toBe(1);
  });

  it("does not retry a refusal that is not about capacity", async () => {
    let attempts = 0;
    const refuse = async () => {
      attempts++;
      throw new ApiError(402, "insufficient_credits", "no credit");
    };
    await expect(waitForSlot(refuse, { waitMs: 60_000, retryMs: 10, signal: new AbortController().signal })).rejects.toMatchObject({ status: 402 });
    expect(attempts).toBe(1);
  });

  it("stops waiting when the run is stopped, without waiting out the minute", async () => {
    const { engine, admit, counted } = oneSlotEngine();
    await engine.take("acct_a");
    const abort = new AbortController();
    const waiting = waitForSlot(admit, { waitMs: 60_000, retryMs: 60_000, signal: abort.signal });
    setTimeout(() => abort.abort(), 50);
    // The pause between attempts is a minute: settling at all shows the abort cut it short.
    await expect(waiting).rejects.toMatchObject({ status: 503 });
    expect(counted.attempts).toBe(2);
  });
});
