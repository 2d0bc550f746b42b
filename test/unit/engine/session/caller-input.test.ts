import { describe, expect, it } from "vitest";
import type { VadFactory } from "../../../../engine/vad/vad-factory.js";
import { RATE, tick, sessionOn } from "../../../helpers/call-session-harness.js";

describe("call session: caller audio faster than real time", () => {
  it("ends with reason audio_overrun when the caller sends audio 10x faster than real time", async () => {
    const call = sessionOn();
    await call.session.start();
    await call.run(20_000, 10);
    expect(call.summary()?.reason).toBe("audio_overrun");
    expect(call.transport.closedWith).toBe("audio_overrun");
    expect(call.transport.events.find((e) => e.type === "ended")).toMatchObject({ reason: "audio_overrun" });
    // Closed within the allowance (2x the wall clock plus 5 s of burst), not minutes later.
    expect(call.summary()!.durationMs).toBeLessThan(2000);
  });

  it("keeps a caller whose audio arrives in bursts (a stall, then catching up) but on average in real time", async () => {
    const call = sessionOn();
    await call.session.start();
    await call.run(2000);
    // The network stalls 3 s, then the 3 s of audio arrive at once.
    call.clock.advance(3000);
    await call.run(20, 150);
    await call.run(10_000);
    expect(call.summary()).toBeUndefined();
    expect((await call.session.stop()).reason).toBe("stopped");
  });

  it("bounds the caller audio waiting for a VAD that has fallen behind, and goes on once it catches up", async () => {
    const pending: Array<() => void> = [];
    let processed = 0;
    const stuckVad: VadFactory = {
      name: "webrtc",
      createVad: () => ({
        name: "stuck",
        sampleRates: [RATE],
        process: () =>
          new Promise<number>((resolve) => {
            processed += 1;
            pending.push(() => resolve(0));
          }),
        reset: () => {},
        close: async () => {},
      }),
      close: async () => {},
    };
    const call = sessionOn({ vad: stuckVad });
    await call.session.start();
    // 20 s of audio in real time while the VAD answers nothing.
    await call.run(20_000);
    expect(call.summary()).toBeUndefined();
    // At most ~3 s of audio (150 frames) was queued for it; the rest was dropped, and said so once.
    expect(processed).toBeLessThanOrEqual(151);
    expect(processed).toBeGreaterThan(100);
    expect(call.transport.events.filter((e) => e.type === "error")).toEqual([{ type: "error", message: expect.stringMatching(/caller audio dropped/), recovered: true }]);
    for (const resolve of pending.splice(0)) resolve();
    await tick();
    const before = processed;
    await call.run(1000);
    expect(processed - before).toBe(50);
    expect(call.summary()).toBeUndefined();
  });
});
