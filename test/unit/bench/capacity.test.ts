import path from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/args.js";
import type { BenchResult } from "../../../scripts/bench/bench-result.js";
import {
  capacityBounds,
  capacityLevels,
  capacityLine,
  capacityOutcome,
  firstSentenceTokens,
  judgeLevel,
  levelFigures,
  parseCapacitySearch,
  searchConversations,
  standinV2vFloorMs,
  type CapacityBounds,
  type CapacityLevel,
  type CapacityResult,
  type LevelFigures,
} from "../../../scripts/bench/capacity.js";
import { renderHtmlReport } from "../../../scripts/bench/report-html.js";
import { renderTextSummary } from "../../../scripts/bench/report-text.js";
import { loadConversations } from "../../../scripts/bench/conversation.js";
import { bench } from "../../../scripts/bench/run-bench.js";
import { timedSteps } from "../../../scripts/bench/summarize-calls.js";
import { emptyCallResult, type CallResult } from "../../../scripts/bench/play-conversation.js";
import type { LevelResult } from "../../../scripts/bench/bench-result.js";
import { DEFAULT_STANDIN_DELAYS } from "../../../scripts/standins/standin-server.js";

const BOUNDS: CapacityBounds = { v2v_p95_ms: 1000, jitter_p95_ms: 20 };

function figures(concurrency: number, fields: Partial<LevelFigures> = {}): LevelFigures {
  return { concurrency, v2v_p95_ms: 800, jitter_p95_ms: 4, failed_calls: 0, outcomes_not_met: 0, server_cpu_percent_per_call: 18.4, server_rss_mb_per_call: 41.2, ...fields };
}

const judged = (list: LevelFigures[]) => list.map((l) => judgeLevel(l, BOUNDS));

describe("capacity levels and their defaults", () => {
  it("steps from --from by --step up to --max, the last at or below it", () => {
    expect(capacityLevels({ from: 2, step: 2, max: 24 })).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
    expect(capacityLevels({ from: 50, step: 50, max: 400 })).toEqual([50, 100, 150, 200, 250, 300, 350, 400]);
    expect(capacityLevels({ from: 3, step: 5, max: 12 })).toEqual([3, 8]);
    expect(capacityLevels({ from: 7, step: 1, max: 7 })).toEqual([7]);
  });

  it("defaults per provider set, smaller with --quick, and takes given values over them", () => {
    expect(parseCapacitySearch({}, "embedded", false)).toEqual({ from: 2, step: 2, max: 24 });
    expect(parseCapacitySearch({}, "standin", false)).toEqual({ from: 50, step: 50, max: 400 });
    expect(parseCapacitySearch({}, "embedded", true)).toEqual({ from: 1, step: 1, max: 2 });
    expect(parseCapacitySearch({}, "standin", true)).toEqual({ from: 10, step: 10, max: 20 });
    expect(parseCapacitySearch({ from: "4", max: "12" }, "embedded", false)).toEqual({ from: 4, step: 2, max: 12 });
  });

  it("goes past the fixed levels' cap of 200 up to 1000, no further, and refuses --from above --max", () => {
    expect(parseCapacitySearch({ max: "1000" }, "standin", false).max).toBe(1000);
    expect(() => parseCapacitySearch({ max: "1001" }, "standin", false)).toThrow(/at most 1000/);
    expect(() => parseCapacitySearch({ from: "30" }, "embedded", false)).toThrow(/--from \(30\) must not be above --max \(24\)/);
    expect(() => parseCapacitySearch({ step: "0" }, "embedded", false)).toThrow(UsageError);
  });

  it("bounds embedded calls at 1000 ms and stand-in calls at what the stand-ins and the endpointing take + 100 ms", () => {
    expect(firstSentenceTokens("Sure, I can help with that. What day works best for you?")).toBe(6);
    expect(firstSentenceTokens("no sentence end")).toBe(3);
    // 500 endpointing + 150 ASR final + 300 first token + 6 x 15 ms of tokens + 200 first speech byte.
    expect(standinV2vFloorMs(DEFAULT_STANDIN_DELAYS, 500)).toBe(1240);
    expect(capacityBounds({}, "standin", DEFAULT_STANDIN_DELAYS, 500)).toEqual({ v2v_p95_ms: 1340, jitter_p95_ms: 20 });
    expect(capacityBounds({}, "embedded", DEFAULT_STANDIN_DELAYS, 500)).toEqual({ v2v_p95_ms: 1000, jitter_p95_ms: 20 });
    expect(capacityBounds({ v2vP95Ms: 700, jitterP95Ms: 10 }, "standin", DEFAULT_STANDIN_DELAYS, 500)).toEqual({ v2v_p95_ms: 700, jitter_p95_ms: 10 });
  });
});

describe("levelFigures", () => {
  const call = (fields: Partial<CallResult>): CallResult => ({ ...emptyCallResult("faq", { protocol: "native", endpointing_mode: "fixed", concurrency: 4, lane: 0 }), ...fields });
  const turn = (ms: number) => ({ voice_to_voice_ms: ms, server: null });
  const level = {
    protocol: "native",
    endpointing_mode: "fixed",
    concurrency: 4,
    wall_ms: 60_000,
    server_cpu_percent: 40,
    server_cpu_percent_per_call: 10,
    server_peak_rss_mb: 900,
    server_rss_mb_per_call: 5,
    server_peak_processes: 5,
    client_cpu_percent: 5,
    client_loop_delay_p99_ms: 2,
    standin_cpu_percent: null,
    api_load: null,
    calls: [
      call({ turns: [turn(600), turn(700)], jitter_ms: [1, 2, 3] }),
      call({ turns: [turn(900)], jitter_ms: [4], outcome: { passed: false, failures: ["x"], required: true } }),
      call({ outcome: { passed: false, failures: ["y"], required: false } }),
      call({ error: "connect ECONNREFUSED" }),
    ],
  } satisfies LevelResult;

  it("takes p95s over every turn and frame of the level, counts errored calls and required outcomes missed", () => {
    expect(levelFigures(level, 500)).toEqual({
      concurrency: 4,
      v2v_p95_ms: 900,
      jitter_p95_ms: 4,
      failed_calls: 1,
      outcomes_not_met: 1,
      server_cpu_percent_per_call: 10,
      // (900 - 500) / 4: memory kept from earlier levels counts, unlike the level table's 5 MB.
      server_rss_mb_per_call: 100,
    });
    expect(levelFigures({ ...level, server_peak_rss_mb: null, server_cpu_percent_per_call: null }, null)).toMatchObject({ server_cpu_percent_per_call: null, server_rss_mb_per_call: null });
  });
});

describe("judgeLevel", () => {
  it("holds at the bounds themselves", () => {
    expect(judgeLevel(figures(4, { v2v_p95_ms: 1000, jitter_p95_ms: 20 }), BOUNDS)).toMatchObject({ holds: true, crossed: [] });
  });

  it("names every bound a level crossed: failed calls, then voice-to-voice, then jitter", () => {
    expect(judgeLevel(figures(4, { failed_calls: 1 }), BOUNDS).crossed).toEqual(["failed_calls"]);
    expect(judgeLevel(figures(4, { v2v_p95_ms: 1000.01 }), BOUNDS).crossed).toEqual(["v2v_p95"]);
    expect(judgeLevel(figures(4, { jitter_p95_ms: 20.5 }), BOUNDS).crossed).toEqual(["jitter_p95"]);
    expect(judgeLevel(figures(4, { failed_calls: 2, v2v_p95_ms: 1200, jitter_p95_ms: 30 }), BOUNDS)).toMatchObject({ holds: false, crossed: ["failed_calls", "v2v_p95", "jitter_p95"] });
  });

  it("does not let a level without samples hold", () => {
    expect(judgeLevel(figures(4, { v2v_p95_ms: null, jitter_p95_ms: null }), BOUNDS).crossed).toEqual(["v2v_p95", "jitter_p95"]);
  });

  it("leaves outcomes not met out of the verdict", () => {
    expect(judgeLevel(figures(4, { outcomes_not_met: 3 }), BOUNDS).holds).toBe(true);
  });
});

describe("capacityOutcome", () => {
  it("stops on failed calls", () => {
    expect(capacityOutcome(judged([figures(2), figures(4), figures(6, { failed_calls: 1, v2v_p95_ms: 1500 })]))).toEqual({ largest_holding_level: 4, stopped_by: "failed_calls" });
  });

  it("stops on voice-to-voice p95", () => {
    expect(capacityOutcome(judged([figures(2), figures(4, { v2v_p95_ms: 1090, jitter_p95_ms: 25 })]))).toEqual({ largest_holding_level: 2, stopped_by: "v2v_p95" });
  });

  it("stops on jitter p95", () => {
    expect(capacityOutcome(judged([figures(50), figures(100), figures(150, { jitter_p95_ms: 41 })]))).toEqual({ largest_holding_level: 100, stopped_by: "jitter_p95" });
  });

  it("reports --max reached when every level held, and 0 when the first level did not", () => {
    expect(capacityOutcome(judged([figures(1), figures(2)]))).toEqual({ largest_holding_level: 2, stopped_by: "max_level" });
    expect(capacityOutcome(judged([figures(10, { jitter_p95_ms: 21 })]))).toEqual({ largest_holding_level: 0, stopped_by: "jitter_p95" });
  });
});

function entry(levels: CapacityLevel[], fields: Partial<CapacityResult> = {}): CapacityResult {
  return { protocol: "twilio", providers: "embedded", endpointing_mode: "fixed", bounds: BOUNDS, search: { from: 2, step: 2, max: 24 }, ...capacityOutcome(levels), levels, ...fields };
}

describe("capacityLine", () => {
  it("gives the largest level that held with its figures, the level that crossed and why, and CPU and memory per call", () => {
    const c = entry(judged([figures(8), figures(10, { v2v_p95_ms: 930, jitter_p95_ms: 4.2 }), figures(12, { v2v_p95_ms: 1090 })]));
    expect(capacityLine(c)).toBe(
      "capacity (twilio, embedded, fixed): 10 concurrent calls hold (v2v p95 930 ms <= 1000, jitter p95 4 ms <= 20); 12 crossed v2v p95 (1090 ms); 18% CPU and 41 MB per call",
    );
  });

  it("says when no level held, when every level did, and names failed calls", () => {
    expect(capacityLine(entry(judged([figures(2, { failed_calls: 1, jitter_p95_ms: 30 })])))).toBe(
      "capacity (twilio, embedded, fixed): no level held (bounds: v2v p95 <= 1000 ms, jitter p95 <= 20 ms); 2 crossed 1 failed call and jitter p95 (30 ms)",
    );
    const all = entry(judged([figures(50), figures(100, { server_cpu_percent_per_call: 0.66, server_rss_mb_per_call: 0.4 })]), { providers: "standin", search: { from: 50, step: 50, max: 100 } });
    expect(capacityLine(all)).toBe(
      "capacity (twilio, standin, fixed): 100 concurrent calls hold (v2v p95 800 ms <= 1000, jitter p95 4 ms <= 20); every level up to --max 100 held (raise --max to look further); 0.7% CPU and 0.4 MB per call",
    );
  });
});

describe("the reports with a capacity search", () => {
  const capacity = [entry(judged([figures(2), figures(4, { jitter_p95_ms: 25 })])), entry(judged([figures(2)]), { protocol: "native" })];
  const r: BenchResult = {
    version: 2,
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:01:00.000Z",
    settings: {
      quick: false,
      providers: "embedded",
      standin_delays_ms: null,
      concurrency: [2, 4],
      protocols: ["twilio", "native"],
      endpointing_modes: ["fixed"],
      endpointing_ms: { fixed: 500 },
      seed: 1,
      arrival_interval_ms: 20,
      target: "test",
      conversations: [],
      fixture_lines: [],
    },
    machine: { platform: "linux", arch: "x64", cpus: 2, cpu_model: "cpu", memory_gb: 4, node: "v20" },
    modes: [],
    levels: [],
    calls: [],
    capacity,
  };

  it("puts the capacity lines in the text summary", () => {
    const text = renderTextSummary(r);
    expect(text).toContain("capacity (twilio, embedded, fixed): 2 concurrent calls hold (v2v p95 800 ms <= 1000, jitter p95 4 ms <= 20); 4 crossed jitter p95 (25 ms)");
    expect(text).toContain("capacity (native, embedded, fixed): 2 concurrent calls hold");
  });

  it("draws a chart per search with both bounds as lines, held levels filled and the crossing one hollow", () => {
    const html = renderHtmlReport(r);
    expect(html).toContain("<h2>Capacity</h2>");
    expect(html.match(/aria-label="capacity search \(/g)?.length).toBe(2);
    expect(html).toContain('aria-label="capacity search (twilio, embedded, fixed): latency and jitter vs concurrent calls"');
    expect(html).toContain("bound 1000 ms");
    expect(html).toContain("bound 20 ms");
    expect(html).toMatch(/fill="#fff" stroke="#1f6fd1" stroke-width="2"><title>4 calls: 25 ms \(crossed jitter_p95\)<\/title>/);
    expect(html).toContain("<td>4</td><td>crossed jitter_p95</td>");
  });

  it("has no capacity section without a search", () => {
    const html = renderHtmlReport({ ...r, capacity: null });
    expect(html).not.toContain("Capacity");
    expect(renderTextSummary({ ...r, capacity: null })).not.toContain("capacity (");
  });
});

describe("bench --find-capacity options", () => {
  it("refuses the search's flags without --find-capacity, and --concurrency with it, before starting anything", async () => {
    await expect(bench(["--from", "4"])).rejects.toThrow(/--from goes with --find-capacity/);
    await expect(bench(["--v2v-p95-ms", "900", "--max", "8"])).rejects.toThrow(/--max, --v2v-p95-ms go with --find-capacity/);
    await expect(bench(["--find-capacity", "--concurrency", "4"])).rejects.toThrow(/not with --concurrency/);
    await expect(bench(["--find-capacity", "--max", "2000"])).rejects.toThrow(UsageError);
    await expect(bench(["--find-capacity", "--jitter-p95-ms", "0"])).rejects.toThrow(/--jitter-p95-ms must be an integer >= 1/);
  });

  it("plays only conversations with a caller turn to time, and refuses a set without any: a level of them could not be judged", () => {
    const shipped = loadConversations(path.resolve(import.meta.dirname, "../../../fixtures/conversations"));
    const some = (...names: string[]) => shipped.filter((c) => names.includes(c.name));
    expect(() => searchConversations(some("backchannel", "silence"))).toThrow(/--find-capacity judges voice-to-voice, and backchannel, silence have no caller turn to time/);
    expect(searchConversations(some("backchannel", "faq", "silence", "booking")).map((c) => c.name)).toEqual(["booking", "faq"]);
  });
});

describe("timedSteps", () => {
  it("counts the say steps spoken while the agent is quiet and timed: the shipped conversations the search plays", () => {
    const shipped = loadConversations(path.resolve(import.meta.dirname, "../../../fixtures/conversations"));
    const timed = Object.fromEntries(shipped.map((c) => [c.name, timedSteps(c)]));
    expect(timed).toMatchObject({ booking: 5, faq: 2, hesitation: 1, transfer: 1, "noisy-line": 1 });
    // Over the agent (backchannels, barge-in), no speech (dtmf, silence), untimed (voicemail's beep).
    for (const name of ["backchannel", "backchannels", "barge-in", "dtmf", "silence", "voicemail"]) expect(timed[name], name).toBe(0);
  });
});
