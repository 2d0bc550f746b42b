import type { BenchResult } from "./bench-result.js";
import { capacityLine, type CapacityLevel, type CapacityResult } from "./capacity.js";
import { METRIC_LABELS, modeHeading, turnTakingRows } from "./report-text.js";
import { summarize } from "./percentiles.js";
import { failedCall, samplesOf } from "./summarize-calls.js";

/** The HTML report: tables and inline SVG plots drawn here, with no plotting dependency. */

const W = 760;
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const fmt = (v: number | null) => (v === null ? "-" : v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1));

/** A round axis maximum at or above `v`. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((k) => k * step).find((n) => n >= v)!;
}

function xAxis(x0: number, x1: number, y: number, max: number, unit: string): string {
  const ticks = Array.from({ length: 6 }, (_, i) => (max * i) / 5);
  return ticks
    .map((t) => {
      const x = x0 + ((x1 - x0) * t) / max;
      return `<line x1="${x}" y1="${y}" x2="${x}" y2="${y + 4}" stroke="#555"/><text x="${x}" y="${y + 16}" font-size="11" text-anchor="middle">${fmt(t)}</text>`;
    })
    .join("") + `<line x1="${x0}" y1="${y}" x2="${x1}" y2="${y}" stroke="#555"/><text x="${x1}" y="${y + 30}" font-size="11" text-anchor="end">${unit}</text>`;
}

/** Grid lines and labels of a y axis from 0 to `max` (y maps a value to its height). */
function yGrid(left: number, right: number, y: (v: number) => number, max: number): string {
  return Array.from({ length: 6 }, (_, i) => (max * i) / 5)
    .map((t) => `<line x1="${left}" y1="${y(t)}" x2="${right}" y2="${y(t)}" stroke="#eee"/><text x="${left - 6}" y="${y(t) + 4}" font-size="11" text-anchor="end">${fmt(t)}</text>`)
    .join("");
}

/** Evenly spaced x positions for concurrency levels, in ascending order. */
function levelX(levels: readonly number[], left: number, right: number): (n: number) => number {
  return (n) => (levels.length === 1 ? (left + right) / 2 : left + ((right - left) * levels.indexOf(n)) / (levels.length - 1));
}

/** Dot colours of the endpointing modes in the stage plot. */
const MODE_DOTS = ["#444", "#b8620b"];

/** Every sample of every stage as a dot, a row per endpointing mode, with p50 (blue) and p95 (red) ticks. */
function stagePlot(r: BenchResult): string {
  const rows = METRIC_LABELS.filter(([name]) => name !== "jitter_ms").flatMap(([name, label]) =>
    r.modes.flatMap((mode, mi) => (mode.metrics[name].n > 0 ? [{ name, label, mode, mi }] : [])),
  );
  const max = niceMax(Math.max(1, ...rows.map((row) => row.mode.metrics[row.name].max ?? 0)));
  const left = 260;
  const right = W - 20;
  const rowH = 26;
  const h = rows.length * rowH + 50;
  const body = rows
    .map(({ name, label, mode, mi }, i) => {
      const y = 20 + i * rowH;
      const x = (v: number) => left + ((right - left) * Math.max(0, v)) / max;
      const samples = samplesOf(r.calls.filter((c) => c.endpointing_mode === mode.endpointing_mode), name);
      const color = MODE_DOTS[mi % MODE_DOTS.length];
      const dots = samples.map((v, k) => `<circle cx="${x(v).toFixed(1)}" cy="${(y + ((k * 7) % 13) - 6).toFixed(1)}" r="2.5" fill="${color}" fill-opacity="0.45"/>`).join("");
      const s = mode.metrics[name];
      const tick = (v: number | null, c: string) => (v === null ? "" : `<line x1="${x(v)}" y1="${y - 10}" x2="${x(v)}" y2="${y + 10}" stroke="${c}" stroke-width="2"/>`);
      const text = r.modes.length > 1 ? `${label.trim()} · ${mode.endpointing_mode}` : label.trim();
      return `<text x="${left - 8}" y="${y + 4}" font-size="12" text-anchor="end" fill="${color}">${esc(text)}</text><line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#eee"/>${dots}${tick(s.p50, "#1f6fd1")}${tick(s.p95, "#d1321f")}`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" role="img" aria-label="latency distribution per stage and endpointing mode">${body}${xAxis(left, right, h - 30, max, "ms")}</svg>`;
}

/** Line dash patterns for each protocol x endpointing mode series. */
const DASHES = ["", "6 4", "2 3", "10 3 2 3"];

/** Voice-to-voice p50/p95/p99 against the number of simultaneous calls, one set of lines per protocol and endpointing mode. */
function concurrencyPlot(r: BenchResult): string {
  const levels = [...new Set(r.levels.map((l) => l.concurrency))].sort((a, b) => a - b);
  const left = 60;
  const right = W - 140;
  const top = 20;
  const bottom = 260;
  const max = niceMax(Math.max(1, ...r.levels.map((l) => l.voice_to_voice_ms.p99 ?? 0)));
  const x = levelX(levels, left, right);
  const y = (v: number) => bottom - ((bottom - top) * v) / max;
  const colors = { p50: "#1f6fd1", p95: "#d1321f", p99: "#8a2be2" } as const;
  const lines: string[] = [];
  const legend: string[] = [];
  const series = [...new Set(r.levels.map((l) => `${l.endpointing_mode} ${l.protocol}`))];
  for (const [si, name] of series.entries()) {
    const dash = DASHES[si % DASHES.length] ? ` stroke-dasharray="${DASHES[si % DASHES.length]}"` : "";
    for (const p of ["p50", "p95", "p99"] as const) {
      const points = r.levels
        .filter((l) => `${l.endpointing_mode} ${l.protocol}` === name && l.voice_to_voice_ms[p] !== null)
        .map((l) => `${x(l.concurrency).toFixed(1)},${y(l.voice_to_voice_ms[p]!).toFixed(1)}`);
      if (points.length === 0) continue;
      lines.push(`<polyline points="${points.join(" ")}" fill="none" stroke="${colors[p]}" stroke-width="2"${dash}/>`);
      lines.push(...points.map((pt) => `<circle cx="${pt.split(",")[0]}" cy="${pt.split(",")[1]}" r="3" fill="${colors[p]}"/>`));
      legend.push(`<line x1="${right + 15}" y1="${top + legend.length * 18}" x2="${right + 40}" y2="${top + legend.length * 18}" stroke="${colors[p]}" stroke-width="2"${dash}/><text x="${right + 45}" y="${top + legend.length * 18 + 4}" font-size="11">${esc(name)} ${p}</text>`);
    }
  }
  const yTicks = yGrid(left, right, y, max);
  const xTicks = levels.map((n) => `<text x="${x(n)}" y="${bottom + 16}" font-size="11" text-anchor="middle">${n}</text>`).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${bottom + 40}" role="img" aria-label="voice-to-voice vs concurrent calls">${yTicks}<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#555"/>${xTicks}<text x="${(left + right) / 2}" y="${bottom + 34}" font-size="11" text-anchor="middle">simultaneous calls</text><text x="12" y="${top}" font-size="11">ms</text>${lines.join("")}${legend.join("")}</svg>`;
}

/**
 * One capacity search: voice-to-voice p95 (top) and frame jitter p95 (bottom) against the
 * levels tried, each with its bound as a dashed line; a level that held is a filled dot, the one
 * that stopped the search a hollow one.
 */
function capacityPlot(c: CapacityResult): string {
  const levels = c.levels.map((l) => l.concurrency);
  const left = 60;
  const right = W - 140;
  const x = levelX(levels, left, right);
  const panelH = 140;
  const panels = [
    { label: "voice-to-voice p95 (ms)", bound: c.bounds.v2v_p95_ms, value: (l: CapacityLevel) => l.v2v_p95_ms, color: "#d1321f", top: 30 },
    { label: "frame jitter p95 (ms)", bound: c.bounds.jitter_p95_ms, value: (l: CapacityLevel) => l.jitter_p95_ms, color: "#1f6fd1", top: 30 + panelH + 50 },
  ];
  const body = panels.map((p) => {
    const bottom = p.top + panelH;
    const max = niceMax(Math.max(p.bound * 1.2, ...c.levels.map((l) => p.value(l) ?? 0)));
    const y = (v: number) => bottom - ((bottom - p.top) * v) / max;
    const measured = c.levels.filter((l) => p.value(l) !== null);
    const points = measured.map((l) => `${x(l.concurrency).toFixed(1)},${y(p.value(l)!).toFixed(1)}`);
    const dots = measured
      .map((l) => `<circle cx="${x(l.concurrency).toFixed(1)}" cy="${y(p.value(l)!).toFixed(1)}" r="4" fill="${l.holds ? p.color : "#fff"}" stroke="${p.color}" stroke-width="2"><title>${l.concurrency} calls: ${fmt(p.value(l))} ms${l.holds ? "" : ` (crossed ${l.crossed.join(", ")})`}</title></circle>`)
      .join("");
    const bound = `<line x1="${left}" y1="${y(p.bound)}" x2="${right}" y2="${y(p.bound)}" stroke="#555" stroke-width="1.5" stroke-dasharray="6 4"/><text x="${right + 6}" y="${y(p.bound) + 4}" font-size="11">bound ${fmt(p.bound)} ms</text>`;
    return (
      `<text x="${left}" y="${p.top - 10}" font-size="12">${esc(p.label)}</text>${yGrid(left, right, y, max)}<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#555"/>${bound}` +
      (points.length ? `<polyline points="${points.join(" ")}" fill="none" stroke="${p.color}" stroke-width="2"/>` : "") +
      dots
    );
  });
  const axisY = panels[1]!.top + panelH;
  const xTicks = levels.map((n) => `<text x="${x(n)}" y="${axisY + 16}" font-size="11" text-anchor="middle">${n}</text>`).join("");
  const name = `${c.protocol}, ${c.providers}, ${c.endpointing_mode}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${axisY + 40}" role="img" aria-label="capacity search (${esc(name)}): latency and jitter vs concurrent calls">${body.join("")}${xTicks}<text x="${(left + right) / 2}" y="${axisY + 34}" font-size="11" text-anchor="middle">simultaneous calls</text></svg>`;
}

/** The capacity section: each search's summary line, its chart and its levels. */
function capacitySection(capacity: readonly CapacityResult[]): string {
  const entries = capacity.map((c) => {
    const rows = c.levels
      .map(
        (l) =>
          `<tr><td>${l.concurrency}</td><td>${l.holds ? "holds" : `crossed ${esc(l.crossed.join(", "))}`}</td><td>${fmt(l.v2v_p95_ms)}</td><td>${fmt(l.jitter_p95_ms)}</td><td>${l.failed_calls}</td><td>${l.outcomes_not_met}</td><td>${fmt(l.server_cpu_percent_per_call)}</td><td>${fmt(l.server_rss_mb_per_call)}</td></tr>`,
      )
      .join("");
    return `<h3>${esc(`${c.protocol}, ${c.providers}, ${c.endpointing_mode}`)}</h3><p>${esc(capacityLine(c))}</p>${capacityPlot(c)}<table><tr><th>calls at once</th><th>verdict</th><th>v2v p95</th><th>jitter p95</th><th>failed calls</th><th>outcomes not met</th><th>server CPU % per call</th><th>RSS MB per call</th></tr>${rows}</table>`;
  });
  return `<h2>Capacity</h2><p>Concurrent calls were raised level by level, each lane playing one conversation per level, until a level did not hold: a level holds when no call failed (refused or errored), voice-to-voice p95 (the caller's clock) is at most its bound and outgoing frame jitter p95 at most its bound. Outcomes not met are shown, not judged.</p>${entries.join("")}`;
}

/** Histogram of |inter-arrival - 20 ms| of agent frames at the client, 1 ms bins. */
function jitterPlot(r: BenchResult): string {
  const samples = r.calls.flatMap((c) => c.jitter_ms);
  const max = niceMax(Math.max(1, summarize(samples).p99 ?? 1));
  const bins = new Array<number>(Math.min(50, Math.ceil(max))).fill(0);
  for (const s of samples) bins[Math.min(bins.length - 1, Math.floor((s / max) * bins.length))]! += 1;
  const left = 60;
  const right = W - 20;
  const top = 20;
  const bottom = 200;
  const peak = Math.max(1, ...bins);
  const bw = (right - left) / bins.length;
  const bars = bins
    .map((n, i) => {
      const h = ((bottom - top) * n) / peak;
      return `<rect x="${(left + i * bw + 1).toFixed(1)}" y="${(bottom - h).toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="#1f6fd1"><title>${n} frames</title></rect>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${bottom + 40}" role="img" aria-label="frame pacing jitter">${bars}<text x="${left - 6}" y="${top + 4}" font-size="11" text-anchor="end">${peak}</text><text x="${left - 6}" y="${bottom}" font-size="11" text-anchor="end">0</text>${xAxis(left, right, bottom, max, "ms from 20 ms (samples beyond the axis fall in the last bin)")}</svg>`;
}

export function renderHtmlReport(r: BenchResult): string {
  const modeHeads = r.modes.map((m) => `<th colspan="5" class="group">${esc(modeHeading(m, "≤"))}</th>`).join("");
  const subHeads = r.modes.map(() => `<th class="group">n</th><th>p50</th><th>p95</th><th>p99</th><th>max</th>`).join("");
  const metricRows = METRIC_LABELS.map(([name, label]) => {
    const cells = r.modes
      .map((m) => {
        const s = m.metrics[name];
        return `<td class="group">${s.n}</td><td>${fmt(s.p50)}</td><td>${fmt(s.p95)}</td><td>${fmt(s.p99)}</td><td>${fmt(s.max)}</td>`;
      })
      .join("");
    return `<tr><td>${esc(label.trim())}</td>${cells}</tr>`;
  }).join("");
  const turnRows = turnTakingRows(r)
    .map(([label, values]) => `<tr><td>${label.startsWith("  ") ? "&nbsp;&nbsp;&nbsp;" : ""}${esc(label.trim())}</td>${values.map((v) => `<td>${esc(v)}</td>`).join("")}</tr>`)
    .join("");
  const levelRows = r.levels
    .map(
      (l) =>
        `<tr><td>${l.endpointing_mode}</td><td>${l.protocol}</td><td>${l.concurrency}</td><td>${l.calls}</td><td>${fmt(l.voice_to_voice_ms.p50)}</td><td>${fmt(l.voice_to_voice_ms.p95)}</td><td>${fmt(l.voice_to_voice_ms.p99)}</td><td>${fmt(l.greeting_ms.p50)}</td><td>${fmt(l.jitter_ms.p95)}</td><td>${l.false_endpoints}</td><td>${fmt(l.server_cpu_percent)}</td><td>${fmt(l.server_cpu_percent_per_call)}</td><td>${fmt(l.server_peak_rss_mb)}</td><td>${fmt(l.server_rss_mb_per_call)}</td><td>${fmt(l.client_cpu_percent)}</td></tr>`,
    )
    .join("");
  const failures = r.calls
    .filter(failedCall)
    .map((c) => `<li>${c.endpointing_mode} ${c.protocol} x${c.concurrency} lane ${c.lane} ${esc(c.conversation)}: ${esc(c.error ?? c.outcome!.failures.join("; "))}</li>`)
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Parley latency benchmark ${esc(r.started_at)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:820px;margin:2em auto;color:#222}table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}.group{border-left:1px solid #bbb}h2{margin-top:1.6em}</style>
</head><body>
<h1>Parley latency benchmark</h1>
<p>${esc(r.started_at)}${r.settings.quick ? " (quick)" : ""} · ${esc(r.machine.platform)}, ${r.machine.cpus} × ${esc(r.machine.cpu_model)}, node ${esc(r.machine.node)} · target: ${esc(r.settings.target)} · seed ${r.settings.seed} · conversations: ${esc(r.settings.conversations.join(", "))}</p>
<p>Endpointing modes, side by side (each ran every level with its own agents): <code>fixed</code> ends the caller's turn after <code>endpointing_ms</code> of silence; <code>adaptive</code> after a short pause when the words form a complete turn, and waits up to <code>endpointing_ms</code> when they do not.</p>
<p>All latencies are measured on the client's clock except the indented server stages, which come from the server's <code>turn_metrics</code> for the same turns. Pipeline overhead is client voice-to-voice minus (server end of speech → first TTS audio). A step the agent answered before it ended (a false endpoint) has no voice-to-voice. Barge-in runs from caller speech over the agent to <code>clear</code> (the reply cut), barge-in stop to the agent's audio stopping (its last frame before over 300 ms without any, or the <code>clear</code>); backchannels count in neither.</p>
${r.capacity?.length ? capacitySection(r.capacity) : ""}
<h2>Latency per stage (ms)</h2>
<table><tr><th></th>${modeHeads}</tr><tr><th>metric</th>${subHeads}</tr>${metricRows}</table>
<h2>Turn-taking</h2>
<p>False endpoints: agent audio starting while a multi-line caller step still had lines to play (in a pause or over a later line). Backchannels: caller speech over the agent where no interruption is expected; a false stop is a <code>clear</code> or the agent's audio missing for over 300 ms, resumed when its audio comes again before the caller's next step.</p>
<table><tr><th>count</th>${r.modes.map((m) => `<th>${esc(modeHeading(m, "≤"))}</th>`).join("")}</tr>${turnRows}</table>
<h2>Distribution per stage</h2><p>Each dot is a sample${r.modes.length > 1 ? `, a row per mode (${r.modes.map((m, i) => `<span style="color:${MODE_DOTS[i % MODE_DOTS.length]}">${esc(m.endpointing_mode)}</span>`).join(", ")})` : ""}; blue: p50, red: p95.</p>
${stagePlot(r)}
<h2>Voice-to-voice vs simultaneous calls</h2>
${concurrencyPlot(r)}
<table><tr><th>mode</th><th>protocol</th><th>calls at once</th><th>calls</th><th>v2v p50</th><th>p95</th><th>p99</th><th>greeting p50</th><th>jitter p95</th><th>false endpoints</th><th>server CPU %</th><th>per call</th><th>server RSS MB</th><th>per call</th><th>client CPU %</th></tr>${levelRows}</table>
<p>CPU in % of one core over the level's wall time; the server figures cover the service process and its recognizer processes, the client figure this benchmark process.</p>
<h2>Outgoing frame pacing jitter</h2>
${jitterPlot(r)}
${failures ? `<h2>Failed calls</h2><ul>${failures}</ul>` : ""}
</body></html>
`;
}
