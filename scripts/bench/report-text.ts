import type { BenchResult, MetricName, ModeResult } from "./bench-result.js";
import { capacityLine } from "./capacity.js";
import { failedCall } from "./summarize-calls.js";

/** Metrics in report order, with their labels; indented ones are the server's stages. */
export const METRIC_LABELS: Array<[MetricName, string]> = [
  ["greeting_ms", "greeting (open -> first audio)"],
  ["voice_to_voice_ms", "voice-to-voice (client)"],
  ["endpointing_wait_ms", "  endpointing wait (server*)"],
  ["asr_ms", "  ASR final after endpoint"],
  ["first_token_ms", "  first token"],
  ["first_tts_audio_ms", "  first TTS audio"],
  ["first_frame_sent_ms", "  first frame sent"],
  ["server_voice_to_voice_ms", "  voice-to-voice (server*)"],
  ["pipeline_overhead_ms", "pipeline overhead*"],
  ["barge_in_ms", "barge-in (speech -> clear)"],
  ["barge_in_stop_ms", "barge-in stop (speech -> quiet)"],
  ["jitter_ms", "outgoing frame jitter"],
];

/** How a mode is named in column headings: "fixed 500 ms", "adaptive <=1500 ms". */
export function modeHeading(m: Pick<ModeResult, "endpointing_mode" | "endpointing_ms">, le = "<="): string {
  return `${m.endpointing_mode} ${m.endpointing_mode === "adaptive" ? le : ""}${m.endpointing_ms} ms`;
}

/** Turn-taking rows: label, then one value per mode. */
export function turnTakingRows(r: BenchResult): Array<[string, string[]]> {
  const modes = r.modes;
  const rows: Array<[string, string[]]> = [["false endpoints / multi-line steps", modes.map((m) => `${m.false_endpoints.total}/${m.false_endpoints.steps}`)]];
  const names = [...new Set(modes.flatMap((m) => Object.keys(m.false_endpoints.by_conversation)))].sort();
  for (const name of names) rows.push([`  ${name}`, modes.map((m) => String(m.false_endpoints.by_conversation[name] ?? "-"))]);
  rows.push(["backchannel false stops / spoken", modes.map((m) => `${m.backchannels.false_stops}/${m.backchannels.spoken}`)]);
  rows.push(["  resumed before the next step", modes.map((m) => String(m.backchannels.resumes))]);
  rows.push(["early replies wasted / prepared", modes.map((m) => `${m.early_replies.wasted}/${m.early_replies.prepared}`)]);
  rows.push(["outcomes met / required", modes.map((m) => `${m.outcomes.met}/${m.outcomes.required}`)]);
  if (modes.some((m) => m.outcomes.not_required > 0)) rows.push(["  outside expect_modes: met", modes.map((m) => `${m.outcomes.not_required_met}/${m.outcomes.not_required}`)]);
  return rows;
}

const cell = (v: number | null, width = 7) => (v === null ? "-" : v >= 100 ? String(Math.round(v)) : v.toFixed(1)).padStart(width);
const LABEL = 34;
/** One mode's column group: n, p50, p95, p99. */
const GROUP = 5 + 7 * 3;
const SEP = "   ";

/** The one-screen summary printed at the end of a run (and saved as bench.txt): a column group per endpointing mode. */
export function renderTextSummary(r: BenchResult): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`Parley latency benchmark ${r.started_at}${r.settings.quick ? " (quick)" : ""}`);
  out.push(`${m.platform}, ${m.cpus} x ${m.cpu_model}, ${m.memory_gb} GB, node ${m.node}`);
  out.push(`target: ${r.settings.target}; seed ${r.settings.seed}; conversations: ${r.settings.conversations.join(", ")}`);
  out.push(`endpointing: ${r.modes.map((mode) => (mode.endpointing_mode === "adaptive" ? `adaptive (short pause after a complete turn, up to ${mode.endpointing_ms} ms)` : `${mode.endpointing_mode} (${mode.endpointing_ms} ms of silence)`)).join(", ")}`);
  if (r.settings.standin_delays_ms) {
    const d = r.settings.standin_delays_ms;
    out.push(`stand-in delays: ASR final ${d.asrFinalMs} ms, LLM first token ${d.llmFirstTokenMs} ms (+${d.llmTokenMs} ms/token), TTS first byte ${d.ttsFirstByteMs} ms`);
  }
  out.push("");
  out.push(`${"".padEnd(LABEL)}${r.modes.map((mode) => SEP + modeHeading(mode).padStart(GROUP)).join("")}`);
  out.push(`${"metric (ms)".padEnd(LABEL)}${r.modes.map(() => `${SEP}${"n".padStart(5)}${"p50".padStart(7)}${"p95".padStart(7)}${"p99".padStart(7)}`).join("")}`);
  for (const [name, label] of METRIC_LABELS) {
    out.push(`${label.padEnd(LABEL)}${r.modes.map((mode) => {
      const s = mode.metrics[name];
      return `${SEP}${String(s.n).padStart(5)}${cell(s.p50)}${cell(s.p95)}${cell(s.p99)}`;
    }).join("")}`);
  }
  out.push("* server stages come from native calls only: a Twilio stream carries no turn metrics");
  out.push("");
  out.push(`${"turn-taking (counts)".padEnd(LABEL)}${r.modes.map((mode) => SEP + modeHeading(mode).padStart(GROUP)).join("")}`);
  for (const [label, values] of turnTakingRows(r)) out.push(`${label.padEnd(LABEL)}${values.map((v) => SEP + v.padStart(GROUP)).join("")}`);
  out.push("");
  const standin = r.settings.providers === "standin";
  out.push(
    `${"mode protocol x calls".padEnd(27)}${"v2v p50".padStart(8)}${"p95".padStart(7)}${"p99".padStart(7)}${"greet".padStart(7)}${"jit95".padStart(7)}${"falseEP".padStart(8)}${"srvCPU%".padStart(8)}${"/call".padStart(7)}${"RSS MB".padStart(8)}${"/call".padStart(7)}${"cliCPU%".padStart(8)}${standin ? "stdCPU%".padStart(8) : ""}`,
  );
  for (const l of r.levels) {
    out.push(
      `${`${l.endpointing_mode} ${l.protocol} x ${l.concurrency}`.padEnd(27)}${cell(l.voice_to_voice_ms.p50, 8)}${cell(l.voice_to_voice_ms.p95)}${cell(l.voice_to_voice_ms.p99)}${cell(l.greeting_ms.p50)}${cell(l.jitter_ms.p95)}${String(l.false_endpoints).padStart(8)}${cell(l.server_cpu_percent, 8)}${cell(l.server_cpu_percent_per_call)}${cell(l.server_peak_rss_mb, 8)}${cell(l.server_rss_mb_per_call)}${cell(l.client_cpu_percent, 8)}${standin ? cell(l.standin_cpu_percent, 8) : ""}`,
    );
  }
  const loaded = r.levels.filter((l) => l.api_load);
  for (const l of loaded) {
    const a = l.api_load!;
    const p95 = l.jitter_ms.p95;
    out.push(
      `API load beside ${l.endpointing_mode} ${l.protocol} x ${l.concurrency}: ${Math.round(a.requests_per_s)} requests/s (p99 ${a.latency_p99_ms} ms, ${a.non_2xx} not 2xx); ` +
        `outgoing frame jitter p95 ${p95 === null ? "-" : p95.toFixed(1)} ms (target <= 20 ms: ${p95 === null ? "no frames" : p95 <= 20 ? "met" : "NOT met"})`,
    );
  }
  if (r.capacity?.length) {
    out.push("");
    for (const c of r.capacity) out.push(capacityLine(c));
  }
  out.push("");
  const checked = r.calls.filter((c) => c.outcome !== null);
  const required = checked.filter((c) => c.outcome!.required);
  const optional = checked.filter((c) => !c.outcome!.required);
  const failed = r.calls.filter(failedCall);
  const errors = r.calls.filter((c) => c.error !== null).length;
  out.push(
    standin
      ? `outcomes: not checked (stand-in replies are canned); ${errors} of ${r.calls.length} calls failed`
      : `outcomes: ${required.filter((c) => c.outcome!.passed).length}/${required.length} calls met their conversation's expectations; ${errors} failed before they could be checked` +
          (optional.length ? `; ${optional.filter((c) => c.outcome!.passed).length}/${optional.length} more met them outside the conversation's expect_modes (not required)` : ""),
  );
  for (const c of failed.slice(0, 5)) out.push(`  ${c.endpointing_mode} ${c.protocol} x${c.concurrency} ${c.conversation}: ${c.error ?? c.outcome!.failures.join("; ")}`);
  if (failed.length > 5) out.push(`  ... and ${failed.length - 5} more (see bench.json)`);
  return out.join("\n") + "\n";
}
