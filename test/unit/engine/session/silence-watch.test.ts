import { describe, expect, it } from "vitest";
import { SilenceWatch } from "../../../../engine/session/silence-watch.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

/** SilenceWatch with a fake host: no call session around it. */
function watch(timeoutMs: number) {
  const clock = new FakeClock();
  const state = { over: false, busy: false, silentAt: [] as number[] };
  const silence = new SilenceWatch(clock, timeoutMs, {
    isOver: () => state.over,
    isBusy: () => state.busy,
    silent: () => state.silentAt.push(clock.now()),
  });
  return { clock, silence, state };
}

describe("SilenceWatch", () => {
  it("finds the call silent once neither side was heard for the whole timeout, counted from the last time one was", () => {
    const w = watch(1_000);
    w.silence.start(0);
    w.clock.advance(600);
    w.silence.heard(600);
    w.clock.advance(999);
    expect(w.state.silentAt).toEqual([]);
    w.clock.advance(1);
    expect(w.state.silentAt).toEqual([1_600]);
  });

  it("counts again from now while someone speaks or the agent prepares a reply", () => {
    const w = watch(1_000);
    w.silence.start(0);
    w.state.busy = true;
    w.clock.advance(5_000);
    expect(w.state.silentAt).toEqual([]);
    w.state.busy = false;
    w.clock.advance(1_000);
    expect(w.state.silentAt).toEqual([6_000]);
  });

  it("does nothing with no timeout, once the call is ending or closing, or after stop()", () => {
    const never = watch(0);
    never.silence.start(0);
    expect(never.clock.pendingTimers).toBe(0);
    const over = watch(1_000);
    over.silence.start(0);
    over.state.over = true;
    over.clock.advance(5_000);
    expect(over.state.silentAt).toEqual([]);
    const stopped = watch(1_000);
    stopped.silence.start(0);
    stopped.silence.stop();
    expect(stopped.clock.pendingTimers).toBe(0);
  });
});
