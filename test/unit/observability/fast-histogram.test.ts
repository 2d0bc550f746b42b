import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FastHistogram } from "../../../src/observability/fast-histogram.js";

const BUCKETS = [0.01, 0.1, 1];
const VALUES = [0, 0.01, 0.05, 0.1, 0.2, 1, 3, 0.005];

describe("FastHistogram", () => {
  it("exposes exactly what prom-client's own histogram exposes for the same observations", async () => {
    const fastRegistry = new Registry();
    const fast = new FastHistogram({ name: "t_seconds", help: "t", labelNames: ["route", "status"] as const, buckets: BUCKETS });
    fastRegistry.registerMetric(fast.asMetric());
    const promRegistry = new Registry();
    const prom = new Histogram({ name: "t_seconds", help: "t", labelNames: ["route", "status"], buckets: BUCKETS, registers: [promRegistry] });
    for (const [i, v] of VALUES.entries()) {
      const route = i % 2 ? "/a" : "/b";
      const key = `${route} 200`;
      if (!fast.observe(key, v)) {
        fast.add(key, { route, status: "200" });
        expect(fast.observe(key, v)).toBe(true);
      }
      prom.observe({ route, status: "200" }, v);
    }
    const lines = async (r: Registry) => (await r.metrics()).split("\n").filter(Boolean).sort();
    expect(await lines(fastRegistry)).toEqual(await lines(promRegistry));
    // A value equal to a bound is in that bucket (le: less than or equal).
    expect(await fastRegistry.metrics()).toContain('t_seconds_bucket{le="0.01",route="/a",status="200"} 2');
  });

  it("records nothing under an unknown key, and forgets its series on reset", async () => {
    const fast = new FastHistogram({ name: "u_seconds", help: "u", labelNames: ["route"] as const, buckets: BUCKETS });
    expect(fast.observe("nope", 1)).toBe(false);
    fast.add("x", { route: "/x" });
    fast.observe("x", 0.5);
    expect((await fast.get()).values.find((v) => v.metricName === "u_seconds_count")).toMatchObject({ labels: { route: "/x" }, value: 1 });
    fast.reset();
    expect((await fast.get()).values).toEqual([]);
  });
});
