// Each agent turn's latency, stage by stage, as an inline SVG (one <g class="turn"> per turn)
// with the numbers in a table beside it. Stages are ms after the caller's end of speech (or the
// start of the call, for turns that answer no speech, such as the greeting).
import { html } from "./html.js";
import { formatMs } from "../lib/format.js";

export const STAGES = [
  { key: "endpoint_ms", name: "Endpoint", hint: "the silence that ended the caller's turn" },
  { key: "asr_final_ms", name: "ASR final", hint: "the recognizer's final text" },
  { key: "first_token_ms", name: "First token", hint: "the dialogue's first text" },
  { key: "first_audio_ms", name: "First TTS audio", hint: "the speech synthesizer's first audio" },
  { key: "voice_to_voice_ms", name: "First frame sent", hint: "voice to voice: the first agent audio frame sent" },
];

/** A round axis maximum and its tick step. */
function axis(max) {
  const rough = Math.max(max, 100) / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough);
  return { max: Math.ceil(Math.max(max, 1) / step) * step, step };
}

/**
 * Segments in time order: each runs from the previous stage reached to the next one, coloured
 * by the stage it reaches. With adaptive endpointing the stages overlap (the reply is prepared
 * before the endpoint): time order, not the list's order, decides.
 */
function segmentsOf(turn) {
  const reached = STAGES.map((stage, order) => ({ ...stage, order, ms: turn[stage.key] }))
    .filter((s) => typeof s.ms === "number")
    .sort((a, b) => a.ms - b.ms || a.order - b.order);
  let from = 0;
  return reached.map((stage) => {
    const segment = { ...stage, from, to: stage.ms };
    from = stage.ms;
    return segment;
  });
}

export function LatencyChart({ latency, title = "Latency per agent turn" }) {
  const turns = latency?.turns ?? [];
  if (turns.length === 0) return html`<p class="muted">No turn latency recorded.</p>`;
  const width = 960;
  const left = 140;
  const right = 80;
  const row = 34;
  const top = 10;
  const bar = 18;
  const { max, step } = axis(Math.max(...turns.map((t) => Math.max(0, ...STAGES.map((s) => t[s.key] ?? 0)))));
  const plot = width - left - right;
  const x = (ms) => left + (Math.max(0, ms) / max) * plot;
  const height = top + turns.length * row + 28;
  const ticks = [];
  for (let t = 0; t <= max + 1e-9; t += step) ticks.push(t);
  const summary = turns.map((t) => `turn ${t.turn_id}: ${formatMs(t.voice_to_voice_ms)} voice to voice`).join("; ");

  return html`
    <figure class="latency">
      <svg class="latency-chart" viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${`${title}. ${summary}`} preserveAspectRatio="xMinYMin meet">
        <g class="axis">
          ${ticks.map(
            (t) => html`<g><line x1=${x(t)} x2=${x(t)} y1=${top - 4} y2=${top + turns.length * row} /><text x=${x(t)} y=${top + turns.length * row + 16} text-anchor="middle">${t} ms</text></g>`,
          )}
        </g>
        ${turns.map((turn, i) => {
          const y = top + i * row + (row - bar) / 2;
          const segments = segmentsOf(turn);
          const end = segments.length ? segments[segments.length - 1].to : 0;
          return html`
            <g class=${`turn${turn.interrupted ? " interrupted" : ""}`} data-turn=${turn.turn_id}>
              <text class="turn-label" x=${left - 8} y=${y + bar / 2 + 4} text-anchor="end">Turn ${turn.turn_id}${turn.end_of_speech_at === null ? " (no speech)" : ""}</text>
              <rect class="track" x=${left} y=${y} width=${plot} height=${bar} rx="3" />
              ${segments.map(
                (s) => html`<rect class=${`stage stage-${s.key}`} x=${x(s.from)} y=${y} width=${Math.max(1, x(s.to) - x(s.from))} height=${bar}><title>${`Turn ${turn.turn_id}: ${s.name} at ${formatMs(s.ms)} (${s.hint})`}</title></rect>`,
              )}
              <text class="total" x=${x(end) + 6} y=${y + bar / 2 + 4}>${formatMs(turn.voice_to_voice_ms)}${turn.interrupted ? " ✂" : ""}</text>
            </g>
          `;
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          ${STAGES.map((s) => html`<li><span class=${`swatch stage-${s.key}`} aria-hidden="true"></span>${s.name}</li>`)}
          <li>✂ interrupted by the caller</li>
        </ul>
        ${latency.voice_to_voice_p50_ms !== undefined
          ? html`<p class="small">Voice to voice: p50 ${formatMs(latency.voice_to_voice_p50_ms)}, p95 ${formatMs(latency.voice_to_voice_p95_ms)}.</p>`
          : null}
      </figcaption>
      <details>
        <summary>The numbers</summary>
        <div class="table-wrap">
          <table class="numbers">
            <thead><tr><th scope="col">Turn</th><th scope="col">End of speech</th>${STAGES.map((s) => html`<th scope="col">${s.name}</th>`)}<th scope="col">Interrupted</th></tr></thead>
            <tbody>
              ${turns.map(
                (t) => html`<tr><th scope="row">${t.turn_id}</th><td>${typeof t.end_of_speech_at === "number" ? `${t.end_of_speech_at.toFixed(2)} s` : t.end_of_speech_at === null ? "none" : "–"}</td>${STAGES.map((s) => html`<td>${formatMs(t[s.key])}</td>`)}<td>${t.interrupted ? "yes" : "no"}</td></tr>`,
              )}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  `;
}

/**
 * A live `turn_metrics` message (server clock, ms) in the API's per-turn shape: stages after
 * the end of speech, or after the call's start for turns that answer no speech (the start is
 * the first frame's time less the voice-to-voice time, which counts from it).
 */
export function turnFromMetrics(m) {
  const base = m.end_of_speech_at ?? (m.first_frame_sent_at !== null && m.voice_to_voice_ms !== null ? m.first_frame_sent_at - m.voice_to_voice_ms : null);
  const rel = (at) => (at === null || at === undefined || base === null ? null : Math.round(at - base));
  return {
    turn_id: m.turn_id,
    // The server's clock is not the call's: known only to be there or not.
    end_of_speech_at: m.end_of_speech_at === null ? null : undefined,
    endpoint_ms: m.end_of_speech_at === null ? null : rel(m.endpoint_at),
    asr_final_ms: m.end_of_speech_at === null ? null : rel(m.asr_final_at),
    first_token_ms: rel(m.first_token_at),
    first_audio_ms: rel(m.first_tts_audio_at),
    voice_to_voice_ms: m.voice_to_voice_ms,
    interrupted: Boolean(m.interrupted),
  };
}
