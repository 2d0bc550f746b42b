import { describe, expect, it } from "vitest";
import { LogThrottle } from "../../../src/core/log-throttle.js";

describe("LogThrottle", () => {
  it("lets one line through per interval and reports how many it held back", () => {
    let now = 1_000;
    const throttle = new LogThrottle(60_000, () => now);
    const lines: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      const held = throttle.take();
      if (held !== undefined) lines.push(held);
      now += 10; // a flood: 100 events a second for 100 s
    }
    expect(lines).toEqual([0, 5_999]);
    now += 60_000;
    expect(throttle.take()).toBe(3_999);
  });
});
