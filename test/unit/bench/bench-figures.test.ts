import { describe, expect, it } from "vitest";
import type { BenchResult } from "../../../scripts/bench/bench-result.js";
import type { Conversation, EndpointingMode } from "../../../scripts/bench/conversation.js";
import { summarize } from "../../../scripts/bench/percentiles.js";
import { emptyCallResult, type CallResult } from "../../../scripts/bench/play-conversation.js";
import { renderHtmlReport } from "../../../scripts/bench/report-html.js";
import { renderTextSummary } from "../../../scripts/bench/report-text.js";
import { failedCall, modeResult, samplesOf } from "../../../scripts/bench/summarize-calls.js";

const conversation = (name: string, steps: Conversation["steps"], extra: Partial<Conversation> = {}): Conversation => ({
  name,
  description: "",
  quick: false,
  line_noise_rms: 0,
  agent: {},
  steps,
  expect: {},
  ...extra,
});

const CONVERSATIONS = [
  conversation("pause", [{ say: ["come-in-on", "day-and-time"], gap_ms: 700 }], { expect_modes: ["adaptive"] }),
  conversation("faq", [{ say: ["opening-hours"] }, { say: ["goodbye"] }]),
  conversation("backchannels", [{ say: ["okay"], over_agent_ms: 2000 }, { say: ["okay"], over_agent_ms: 6500 }], { expect: { interrupted: false } }),
];

function call(mode: EndpointingMode, name: string, fields: Partial<CallResult>): CallResult {
  return { ...emptyCallResult(name, { protocol: "native", endpointing_mode: mode, concurrency: 1, lane: 0 }), ...fields };
}

const turn = (ms: number) => ({ voice_to_voice_ms: ms, server: null });

const CALLS: CallResult[] = [
  call("fixed", "pause", { false_endpoints: 1, outcome: { passed: false, failures: ["2 caller turns, expected 1"], required: false } }),
  call("fixed", "faq", { turns: [turn(650), turn(700)], barge_in_ms: [380], barge_in_stop_ms: [90], outcome: { passed: true, failures: [], required: true } }),
  call("fixed", "backchannels", { backchannels: 2, backchannel_false_stops: 1, backchannel_resumes: 1, outcome: { passed: false, failures: ["the agent was interrupted"], required: true } }),
  call("adaptive", "pause", { turns: [turn(340)], early_replies: 2, early_replies_wasted: 1, outcome: { passed: true, failures: [], required: true } }),
  call("adaptive", "faq", { turns: [turn(300), turn(320)], early_replies: 2, barge_in_ms: [360], barge_in_stop_ms: [70], outcome: { passed: true, failures: [], required: true } }),
  call("adaptive", "backchannels", { backchannels: 2, outcome: { passed: true, failures: [], required: true } }),
];

describe("modeResult", () => {
  const fixed = modeResult("fixed", 500, CALLS, CONVERSATIONS);
  const adaptive = modeResult("adaptive", 1500, CALLS, CONVERSATIONS);

  it("keeps each mode's calls apart", () => {
    expect(fixed.calls).toBe(3);
    expect(fixed.metrics.voice_to_voice_ms).toMatchObject({ n: 2, p50: 650, p95: 700 });
    expect(adaptive.metrics.voice_to_voice_ms).toMatchObject({ n: 3, p50: 320, p95: 340 });
    expect(fixed.metrics.barge_in_ms.p50).toBe(380);
    expect(adaptive.metrics.barge_in_ms.p50).toBe(360);
    expect([fixed.metrics.barge_in_stop_ms.p95, adaptive.metrics.barge_in_stop_ms.p95]).toEqual([90, 70]);
  });

  it("counts false endpoints over the multi-line steps played, per conversation (zero included)", () => {
    expect(fixed.false_endpoints).toEqual({ total: 1, steps: 1, calls: 1, by_conversation: { pause: 1 } });
    expect(adaptive.false_endpoints).toEqual({ total: 0, steps: 1, calls: 0, by_conversation: { pause: 0 } });
  });

  it("sums backchannels, false stops and resumes", () => {
    expect(fixed.backchannels).toEqual({ spoken: 2, false_stops: 1, resumes: 1 });
    expect(adaptive.backchannels).toEqual({ spoken: 2, false_stops: 0, resumes: 0 });
  });

  it("sums the early replies prepared and the ones dropped unheard", () => {
    expect(fixed.early_replies).toEqual({ prepared: 0, wasted: 0 });
    expect(adaptive.early_replies).toEqual({ prepared: 4, wasted: 1 });
  });

  it("counts required outcomes apart from the ones outside a conversation's expect_modes", () => {
    expect(fixed.outcomes).toEqual({ required: 2, met: 1, not_required: 1, not_required_met: 0 });
    expect(adaptive.outcomes).toEqual({ required: 3, met: 3, not_required: 0, not_required_met: 0 });
  });
});

describe("failedCall", () => {
  it("fails a run on errors and required outcomes not met, not on outcomes outside expect_modes", () => {
    expect(CALLS.map(failedCall)).toEqual([false, false, true, false, false, false]);
    expect(failedCall(call("fixed", "faq", { error: "timed out waiting for the greeting" }))).toBe(true);
  });
});

function result(modes: EndpointingMode[]): BenchResult {
  const ms = { fixed: 500, adaptive: 1500 } as const;
  const calls = CALLS.filter((c) => modes.includes(c.endpointing_mode));
  return {
    version: 2,
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:01:00.000Z",
    settings: {
      quick: true,
      providers: "embedded",
      standin_delays_ms: null,
      concurrency: [1],
      protocols: ["native"],
      endpointing_modes: modes,
      endpointing_ms: Object.fromEntries(modes.map((m) => [m, ms[m]])),
      seed: 1,
      arrival_interval_ms: 20,
      target: "test",
      conversations: CONVERSATIONS.map((c) => c.name),
      fixture_lines: [],
    },
    machine: { platform: "linux", arch: "x64", cpus: 2, cpu_model: "cpu", memory_gb: 4, node: "v20" },
    modes: modes.map((m) => modeResult(m, ms[m], calls, CONVERSATIONS)),
    levels: modes.map((m) => {
      const own = calls.filter((c) => c.endpointing_mode === m);
      return {
        protocol: "native" as const,
        endpointing_mode: m,
        concurrency: 1,
        wall_ms: 1000,
        server_cpu_percent: 10,
        server_cpu_percent_per_call: 10,
        server_peak_rss_mb: 500,
        server_rss_mb_per_call: 50,
        server_peak_processes: 2,
        client_cpu_percent: 3,
        client_loop_delay_p99_ms: 1,
        standin_cpu_percent: null,
        api_load: null,
        calls: own.length,
        voice_to_voice_ms: summarize(samplesOf(own, "voice_to_voice_ms")),
        greeting_ms: summarize([]),
        jitter_ms: summarize([]),
        false_endpoints: own.reduce((n, c) => n + c.false_endpoints, 0),
      };
    }),
    calls,
  };
}

/** The cells of a text report row (columns are separated by two spaces or more). */
function row(text: string, label: string): string[] {
  const line = text.split("\n").find((l) => l.startsWith(label));
  if (!line) throw new Error(`no row "${label}" in:\n${text}`);
  return line.slice(label.length).trim().split(/\s{2,}/);
}

describe("renderTextSummary", () => {
  const text = renderTextSummary(result(["fixed", "adaptive"]));

  it("puts the modes side by side, a column group each, in the order they ran", () => {
    const heading = text.split("\n").find((l) => l.includes("fixed 500 ms"))!;
    expect(heading.indexOf("fixed 500 ms")).toBeLessThan(heading.indexOf("adaptive <=1500 ms"));
    // n, p50, p95, p99 for fixed, then for adaptive.
    expect(row(text, "voice-to-voice (client)")).toEqual(["2", "650", "700", "700", "3", "320", "340", "340"]);
    expect(row(text, "barge-in (speech -> clear)")).toEqual(["1", "380", "380", "380", "1", "360", "360", "360"]);
    expect(row(text, "barge-in stop (speech -> quiet)")).toEqual(["1", "90.0", "90.0", "90.0", "1", "70.0", "70.0", "70.0"]);
  });

  it("reports false endpoints, backchannel stops and resumes, and outcomes per mode", () => {
    expect(row(text, "false endpoints / multi-line steps")).toEqual(["1/1", "0/1"]);
    expect(row(text, "  pause")).toEqual(["1", "0"]);
    expect(row(text, "backchannel false stops / spoken")).toEqual(["1/2", "0/2"]);
    expect(row(text, "  resumed before the next step")).toEqual(["1", "0"]);
    expect(row(text, "outcomes met / required")).toEqual(["1/2", "3/3"]);
    expect(row(text, "  outside expect_modes: met")).toEqual(["0/1", "0/0"]);
    expect(row(text, "fixed native x 1")[5]).toBe("1");
    expect(text).toContain("outcomes: 4/5 calls met their conversation's expectations");
    expect(text).toContain("  fixed native x1 backchannels: the agent was interrupted");
  });

  it("shows one column group for a single mode", () => {
    const one = renderTextSummary(result(["adaptive"]));
    expect(one).not.toContain("fixed 500 ms");
    expect(row(one, "false endpoints / multi-line steps")).toEqual(["0/1"]);
  });
});

describe("renderTextSummary with --api-load", () => {
  it("puts the requests per second achieved beside the level's outgoing frame jitter p95 and the 20 ms target", () => {
    const r = result(["fixed", "adaptive"]);
    const load = { requests: 90_000, duration_s: 60, requests_per_s: 1500.4, latency_p50_ms: 5, latency_p99_ms: 14, non_2xx: 0, errors: 0 };
    r.levels[0] = { ...r.levels[0]!, api_load: load, jitter_ms: summarize([1, 2, 3, 4, 30]) };
    r.levels[1] = { ...r.levels[1]!, api_load: load, jitter_ms: summarize([1, 2, 3, 4, 5]) };
    const text = renderTextSummary(r);
    expect(text).toContain("API load beside fixed native x 1: 1500 requests/s (p99 14 ms, 0 not 2xx); outgoing frame jitter p95 30.0 ms (target <= 20 ms: NOT met)");
    expect(text).toContain("API load beside adaptive native x 1: 1500 requests/s (p99 14 ms, 0 not 2xx); outgoing frame jitter p95 5.0 ms (target <= 20 ms: met)");
    expect(renderTextSummary(result(["fixed"]))).not.toContain("API load");
  });
});

describe("renderHtmlReport", () => {
  it("has a column group per mode in the latency table and a turn-taking table", () => {
    const html = renderHtmlReport(result(["fixed", "adaptive"]));
    expect(html).toContain(`<th colspan="5" class="group">fixed 500 ms</th><th colspan="5" class="group">adaptive ≤1500 ms</th>`);
    expect(html).toContain("<tr><td>false endpoints / multi-line steps</td><td>1/1</td><td>0/1</td></tr>");
    expect(html).toContain("<tr><td>backchannel false stops / spoken</td><td>1/2</td><td>0/2</td></tr>");
    expect(html.match(/<svg /g)?.length).toBe(3);
    expect(html).toContain("<li>fixed native x1 lane 0 backchannels: the agent was interrupted</li>");
  });
});
