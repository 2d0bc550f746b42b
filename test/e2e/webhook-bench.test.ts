import { describe, expect, it } from "vitest";
import path from "node:path";
import { packageRoot } from "../../engine/index.js";
import { runNodeScript } from "../../scripts/parley-process.js";

// The webhook delivery measurement runs and accounts for every delivery (its figures are those
// of docs/benchmark.md; no timing is asserted here).

describe("npm run bench:webhooks", () => {
  it("writes events, receives every delivery in both scenarios, and reports the figures as JSON", async () => {
    const result = await runNodeScript(path.join(packageRoot(import.meta.url), "dist/scripts/webhook-bench.js"), ["--rate", "50", "--seconds", "1", "--warmup", "0", "--webhooks", "2", "--json"], {}, { killAfterMs: 110_000 });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ rate: 50, seconds: 1, webhooks: 2, target_p95_ms: 100 });
    expect(report.scenarios.map((s: any) => s.name)).toEqual(["healthy receivers", "plus one receiver that never answers"]);
    for (const s of report.scenarios) {
      expect(s.events_written).toBe(50);
      expect(s.deliveries_expected).toBe(100);
      expect(s.deliveries_received).toBe(100);
      expect(s.first_attempt_delay_ms.n).toBe(100);
      expect(typeof s.first_attempt_delay_ms.p95).toBe("number");
      expect(typeof s.target_met).toBe("boolean");
    }
  }, 120_000);
});
