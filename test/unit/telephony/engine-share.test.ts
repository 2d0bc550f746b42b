import { describe, expect, it } from "vitest";
import { EngineShare } from "../../../src/telephony/engine-share.js";

function share(capacity: number, accounts: number, sharePercent = 50) {
  return new EngineShare({ capacity, sharePercent, countAccounts: async () => accounts });
}

describe("engine share: one account cannot take every call slot", () => {
  it("lets one account hold at most its share while several accounts exist; the others still get slots", async () => {
    const engine = share(4, 3);
    await engine.take("acct_a");
    await engine.take("acct_a");
    await expect(engine.take("acct_a")).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded", message: expect.stringContaining("2 of the engine's 4") });
    await engine.take("acct_b");
    await engine.take("acct_c");
    // Full: anyone is refused, as engine capacity.
    await expect(engine.take("acct_b")).rejects.toMatchObject({ status: 503, code: "engine_at_capacity", headers: { "Retry-After": "30" } });
    expect(engine.held()).toBe(4);
  });

  it("gives a slot back on release, once", async () => {
    const engine = share(2, 2);
    const slot = await engine.take("acct_a");
    await expect(engine.take("acct_a")).rejects.toMatchObject({ status: 429 });
    slot.release();
    slot.release();
    expect(engine.held("acct_a")).toBe(0);
    await engine.take("acct_a");
    await engine.take("acct_b");
    expect(engine.held()).toBe(2);
  });

  it("lets a lone account use every slot, and always at least one", async () => {
    const lone = share(4, 1);
    for (let i = 0; i < 4; i++) await lone.take("acct_a");
    await expect(lone.take("acct_a")).rejects.toMatchObject({ status: 503 });
    expect(share(1, 5).shareOf(5)).toBe(1);
    expect(share(10, 5, 25).shareOf(5)).toBe(2);
  });
});
