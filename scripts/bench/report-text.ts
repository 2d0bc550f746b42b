import type { BenchResult, MetricName } from "./bench-result.js";

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
  ["jitter_ms", "outgoing frame jitter"],
];

const cell = (v: number | null, width = 7) => (v === null ? "-" : v >= 100 ? String(Math.round(v)) : v.toFixed(1)).padStart(width);

/** The one-screen summary printed at the end of a run (and saved as bench.txt). */
export function renderTextSummary(r: BenchResult): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`Parley latency benchmark ${r.started_at}${r.settings.quick ? " (quick)" : ""}`);
  out.push(`${m.platform}, ${m.cpus} x ${m.cpu_model}, ${m.memory_gb} GB, node ${m.node}`);
  out.push(`target: ${r.settings.target}; seed ${r.settings.seed}; conversations: ${r.settings.conversations.join(", ")}`);
  if (r.settings.standin_delays_ms) {
    const d = r.settings.standin_delays_ms;
    out.push(`stand-in delays: ASR final ${d.asrFinalMs} ms, LLM first token ${d.llmFirstTokenMs} ms (+${d.llmTokenMs} ms/token), TTS first byte ${d.ttsFirstByteMs} ms`);
  }
  out.push("");
  out.push(`${"metric (ms)".padEnd(32)}${"n".padStart(5)}${"p50".padStart(7)}${"p95".padStart(7)}${"p99".padStart(7)}`);
  for (const [name, label] of METRIC_LABELS) {
    const s = r.metrics[name];
    out.push(`${label.padEnd(32)}${String(s.n).padStart(5)}${cell(s.p50)}${cell(s.p95)}${cell(s.p99)}`);
  }
  out.push("* server stages come from native calls only: a Twilio stream carries no turn metrics");
  out.push("");
  out.push(
    `${"protocol x calls".padEnd(18)}${"v2v p50".padStart(8)}${"p95".padStart(7)}${"p99".padStart(7)}${"greet".padStart(7)}${"jit95".padStart(7)}${"srvCPU%".padStart(8)}${"/call".padStart(7)}${"RSS MB".padStart(8)}${"/call".padStart(7)}${"cliCPU%".padStart(8)}${r.settings.providers === "standin" ? "stdCPU%".padStart(8) : ""}`,
  );
  for (const l of r.levels) {
    out.push(
      `${`${l.protocol} x ${l.concurrency}`.padEnd(18)}${cell(l.voice_to_voice_ms.p50, 8)}${cell(l.voice_to_voice_ms.p95)}${cell(l.voice_to_voice_ms.p99)}${cell(l.greeting_ms.p50)}${cell(l.jitter_ms.p95)}${cell(l.server_cpu_percent, 8)}${cell(l.server_cpu_percent_per_call)}${cell(l.server_peak_rss_mb, 8)}${cell(l.server_rss_mb_per_call)}${cell(l.client_cpu_percent, 8)}${r.settings.providers === "standin" ? cell(l.standin_cpu_percent, 8) : ""}`,
    );
  }
  out.push("");
  const checked = r.calls.filter((c) => c.outcome !== null);
  const failed = r.calls.filter((c) => c.error !== null || c.outcome?.passed === false);
  const errors = r.calls.filter((c) => c.error !== null).length;
  out.push(
    r.settings.providers === "standin"
      ? `outcomes: not checked (stand-in replies are canned); ${errors} of ${r.calls.length} calls failed`
      : `outcomes: ${checked.filter((c) => c.outcome!.passed).length}/${checked.length} calls met their conversation's expectations; ${errors} failed before they could be checked`,
  );
  for (const c of failed.slice(0, 5)) out.push(`  ${c.protocol} x${c.concurrency} ${c.conversation}: ${c.error ?? c.outcome!.failures.join("; ")}`);
  if (failed.length > 5) out.push(`  ... and ${failed.length - 5} more (see bench.json)`);
  return out.join("\n") + "\n";
}
