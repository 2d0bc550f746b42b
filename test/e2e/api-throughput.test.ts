import { describe, expect, it } from "vitest";
import path from "node:path";
import { packageRoot } from "../../engine/index.js";
import { runNodeScript } from "../../scripts/parley-process.js";

// The API throughput measurement runs end to end and reports both servers and their ratio for
// every endpoint (its figures are the benchmark's; no timing is asserted here).

const SCRIPT = path.join(packageRoot(import.meta.url), "dist/scripts/api-throughput.js");

describe("npm run bench:api", () => {
  it("loads Parley and a bare Express app on each endpoint and reports req/s, latency and the ratio as JSON", async () => {
    const result = await runNodeScript(SCRIPT, ["--duration", "1", "--warmup", "0", "--json", "--no-fail"], {}, { killAfterMs: 170_000 });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ connections: 10, duration: 1, target_ratio: 0.4, target_p99_ms: 10 });
    // Request logging was on: one line per request Parley answered.
    const answered = report.endpoints.reduce((n: number, e: any) => n + e.parley.requests, 0);
    expect(report.request_log_lines).toBeGreaterThanOrEqual(answered);
    expect(report.endpoints.map((e: any) => e.name)).toEqual(["list-agents", "read-agent", "list-calls", "read-call", "list-numbers"]);
    for (const e of report.endpoints) {
      for (const m of [e.parley, e.express]) {
        expect(m.requests).toBeGreaterThan(0);
        expect(m.requests_per_second).toBeGreaterThan(0);
        expect(m.p99_ms).toBeGreaterThanOrEqual(m.p50_ms);
        expect(m).toMatchObject({ non_2xx: 0, errors: 0 });
      }
      expect(e.ratio).toBeCloseTo(e.parley.requests_per_second / e.express.requests_per_second, 2);
      expect(typeof e.ratio_met).toBe("boolean");
      expect(typeof e.p99_met).toBe("boolean");
    }
    expect(result.stderr).toContain("list-agents: 1 of 1 s measured on each");
  }, 180_000);

  it("prints the table, and exits 1 exactly when a row misses a target; --write-load writes while measuring", async () => {
    const result = await runNodeScript(SCRIPT, ["--duration", "1", "--warmup", "0", "--only", "read-agent", "--write-load"], {}, { killAfterMs: 110_000 });
    const row = result.stdout.split("\n").find((line) => line.startsWith("| read-agent |"));
    expect(row, result.stderr).toMatch(/^\| read-agent \| `\/v1\/agents\/agent_…` \| \d+ \| [\d.]+ \| [\d.]+ \| \d+ \| [\d.]+ \| \d\.\d\d \|/);
    expect(result.code).toBe(row!.endsWith("| pass |") ? 0 : 1);
    expect(result.stdout).toContain("the account's rate limit lifted");
    // At least one heartbeat every 50 ms over the 2 s of measured load.
    const writes = Number(/Write load: a live call's heartbeat written to Parley's database every 50 ms from another connection \((\d+) writes\)/.exec(result.stdout)?.[1]);
    expect(writes).toBeGreaterThanOrEqual(20);
  }, 120_000);
});
