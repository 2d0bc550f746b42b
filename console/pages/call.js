// One call: its transcript beside the recording (a line plays from its moment), the analysis,
// the agent's tool calls, each agent turn's latency as a chart, and the call's events with
// their webhook deliveries.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { ErrorNotice, Loading, StatusBadge } from "../components/feedback.js";
import { LatencyChart } from "../components/latency-chart.js";
import { CallSupervision } from "./call-supervision.js";
import { api, listAll } from "../lib/api.js";
import { LIVE_CALL_STATUSES } from "../lib/api-values.js";
import { formatClock, formatDateTime, formatDuration, label } from "../lib/format.js";
import { BASE } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

const POLL_MS = 3000;
/** End events are written with the analysis, up to 20 s after the end with a chat model. */
const ANALYSIS_WAIT_MS = 60_000;

function stillChanging(call) {
  if (LIVE_CALL_STATUSES.includes(call.status)) return true;
  return call.answered_at !== null && call.analysis === null && call.ended_at !== null && Date.now() - Date.parse(call.ended_at) < ANALYSIS_WAIT_MS;
}

/** The recording on this page's own origin (the link's signature is in its query). */
function localRecordingUrl(recordingUrl) {
  const url = new URL(recordingUrl, location.href);
  return url.pathname + url.search;
}

function Transcript({ transcript, audio, playable, playingAt }) {
  if (!transcript?.length) return html`<p class="muted">No transcript.</p>`;
  const seek = (seconds) => {
    const player = audio.current;
    if (!player) return;
    player.currentTime = seconds;
    void player.play().catch(() => {});
  };
  const current = transcript.findLastIndex((s) => s.timestamp <= playingAt);
  return html`
    <ol class="transcript" aria-label="Transcript">
      ${transcript.map(
        (s, i) => html`
          <li class=${`line line-${s.role}`}>
            <button
              type="button"
              class="line-button"
              aria-current=${playingAt > 0 && i === current ? "true" : undefined}
              disabled=${!playable}
              title=${playable ? `Play the recording from ${formatClock(s.timestamp)}` : "No recording to play"}
              onClick=${() => seek(s.timestamp)}
            >
              <span class="when">${formatClock(s.timestamp)}</span>
              <span class="who">${s.role === "agent" ? "Agent" : "Caller"}</span>
              <span class="what">${s.content}</span>
            </button>
          </li>
        `,
      )}
    </ol>
  `;
}

function Analysis({ analysis }) {
  if (!analysis) return html`<p class="muted">No analysis (yet).</p>`;
  const data = Object.entries(analysis.extracted_data ?? {}).filter(([, v]) => v !== null);
  return html`
    <p>${analysis.summary}</p>
    <dl class="pairs">
      <div><dt>Outcome</dt><dd><span class=${`badge badge-${analysis.success ? "ok" : "muted"}`}>${label(analysis.outcome)}</span></dd></div>
      <div><dt>Success</dt><dd>${analysis.success ? "yes" : "no"}</dd></div>
      <div><dt>Sentiment</dt><dd>${analysis.sentiment.overall} (${analysis.sentiment.score})</dd></div>
      <div><dt>Source</dt><dd>${label(analysis.source)}${analysis.fallback_reason ? ` (${analysis.fallback_reason})` : ""}</dd></div>
      ${data.map(([k, v]) => html`<div><dt>${label(k)}</dt><dd>${String(v)}</dd></div>`)}
    </dl>
  `;
}

/** Answers longer than this show cut, with the whole one under a disclosure. */
const ANSWER_CHARS = 160;

/** Each tool the agent ran, in order: what it was asked, whether it worked, what it answered. */
function ToolCalls({ toolCalls, live }) {
  if (!toolCalls?.length) return html`<p class="muted">${live ? "None yet: shown when the call ends." : "The agent used no tool on this call."}</p>`;
  return html`
    <ol class="events tool-calls">
      ${toolCalls.map((t) => {
        const answer = t.data === null ? null : JSON.stringify(t.data);
        return html`
          <li>
            <div class="event-head">
              <code>${t.name}</code> <span class=${`badge badge-${t.ok ? "ok" : "bad"}`}>${t.ok ? "ok" : "failed"}</span>
            </div>
            <dl class="pairs">
              <div><dt>Arguments</dt><dd><code>${JSON.stringify(t.arguments)}</code></dd></div>
              ${t.ok ? null : html`<div><dt>Error</dt><dd>${t.error}</dd></div>`}
              ${answer === null
                ? null
                : html`<div>
                    <dt>Answer</dt>
                    <dd>
                      <code>${answer.length > ANSWER_CHARS ? `${answer.slice(0, ANSWER_CHARS)}…` : answer}</code>
                      ${answer.length > ANSWER_CHARS ? html`<details><summary>The whole answer</summary><pre>${JSON.stringify(t.data, null, 2)}</pre></details>` : null}
                    </dd>
                  </div>`}
            </dl>
          </li>
        `;
      })}
    </ol>
  `;
}

/** The call's events (GET /v1/events?call_id=), and their deliveries to each webhook (its log filtered by call_id). */
async function loadEvents(call) {
  const events = await listAll("/v1/events", { call_id: call.id, order: "asc" });
  const deliveries = {};
  let deliveryError = null;
  try {
    const webhooks = await listAll("/v1/webhooks", {}, 100);
    await Promise.all(
      webhooks.map(async (webhook) => {
        for (const d of await listAll(`/v1/webhooks/${webhook.id}/deliveries`, { call_id: call.id })) (deliveries[d.event_id] ??= []).push({ ...d, url: webhook.url });
      }),
    );
  } catch (err) {
    deliveryError = err;
  }
  return { events, deliveries, deliveryError };
}

function CallEvents({ call }) {
  const settled = !LIVE_CALL_STATUSES.includes(call.status);
  const result = useResource(() => loadEvents(call), [call.id, call.status, call.analysis === null]);
  return html`
    <section class="card" aria-labelledby="call-events">
      <h2 id="call-events">Events and webhook deliveries</h2>
      <${ErrorNotice} error=${result.error} what="Events could not be read" />
      ${result.data === undefined && !result.error ? html`<${Loading} />` : null}
      ${result.data && result.data.events.length === 0 ? html`<p class="muted">No events${settled ? "" : " yet"}.</p>` : null}
      ${result.data?.deliveryError ? html`<${ErrorNotice} error=${result.data.deliveryError} what="Deliveries could not be read" />` : null}
      ${result.data?.events.length
        ? html`
            <ol class="events">
              ${result.data.events.map((event) => {
                const deliveries = result.data.deliveries[event.id] ?? [];
                return html`
                  <li>
                    <div class="event-head"><code>${event.event}</code> <span class="muted small">#${event.sequence} · ${formatDateTime(event.timestamp)}</span></div>
                    ${deliveries.length
                      ? html`<ul class="deliveries">
                          ${deliveries.map(
                            (d) => html`<li>
                              <${StatusBadge} status=${d.status} /> to <a href=${`${BASE}/webhooks/${d.webhook_id}`}>${d.url}</a>${", "}${d.attempt_count} attempt${d.attempt_count === 1 ? "" : "s"}${d.attempts.length ? `, last HTTP ${d.attempts.at(-1).status_code ?? d.attempts.at(-1).error ?? "none"}` : ""}
                            </li>`,
                          )}
                        </ul>`
                      : html`<p class="muted small">No webhook delivery.</p>`}
                    <details><summary>Data</summary><pre>${JSON.stringify(event.data, null, 2)}</pre></details>
                  </li>
                `;
              })}
            </ol>
          `
        : null}
    </section>
  `;
}

export function CallPage({ params }) {
  const call = useResource(() => api("GET", `/v1/calls/${params.id}`, { query: { include: "transcript,recording,analysis,latency,tool_calls" } }), [params.id], {
    pollMs: POLL_MS,
    shouldPoll: stillChanging,
  });
  const agent = useResource(() => (call.data ? api("GET", `/v1/agents/${call.data.agent_id}`).catch(() => null) : Promise.resolve(null)), [call.data?.agent_id]);
  const audio = useRef(null);
  const [recording, setRecording] = useState(null);
  const [playingAt, setPlayingAt] = useState(0);
  const [endError, setEndError] = useState(null);
  const [removeError, setRemoveError] = useState(null);

  // A fresh signed link comes with every read: keep the first, so polling does not reload the player.
  useEffect(() => {
    if (!recording && call.data?.recording_url) setRecording(localRecordingUrl(call.data.recording_url));
  }, [call.data?.recording_url]);

  if (call.error && !call.data) return html`<${PageHeader} title="Call" /><${ErrorNotice} error=${call.error} what="The call could not be loaded" />`;
  if (!call.data) return html`<${PageHeader} title="Call" /><${Loading} />`;
  const c = call.data;
  const live = LIVE_CALL_STATUSES.includes(c.status);
  const hasContent = Boolean(c.transcript?.length || c.recording_url || c.analysis || c.tool_calls?.length);
  // DELETE /v1/calls/{id}: what was said goes, for a privacy request; the billing record stays.
  const removeContent = async () => {
    if (!confirm("Delete this call's recording, transcript, analysis and tool calls? This cannot be undone. Its status, numbers, times, duration and charge stay.")) return;
    setRemoveError(null);
    try {
      await api("DELETE", `/v1/calls/${c.id}`);
      setRecording(null);
      await call.reload();
    } catch (err) {
      setRemoveError(err);
    }
  };
  const end = async () => {
    try {
      call.setData({ ...c, ...(await api("POST", `/v1/calls/${c.id}/end`)) });
      void call.reload();
    } catch (err) {
      setEndError(err);
    }
  };

  return html`
    <${PageHeader} title=${`Call ${formatDateTime(c.created_at, true)}`} subtitle=${html`<span class="mono">${c.id}</span>`}>
      ${live ? html`<button type="button" class="danger" onClick=${end}>End call</button>` : null}
      ${!live && hasContent ? html`<button type="button" class="danger" onClick=${removeContent}>Delete content</button>` : null}
      <a class="button secondary" href=${`${BASE}/calls`}>All calls</a>
    <//>
    <${ErrorNotice} error=${endError} what="The call was not ended" />
    <${ErrorNotice} error=${removeError} what="The call's content was not deleted" />
    <section class="card" aria-label="Call details">
      <dl class="pairs summary">
        <div><dt>Status</dt><dd><${StatusBadge} status=${c.status} />${live ? html` <span class="muted small">(refreshing)</span>` : null}</dd></div>
        <div><dt>Direction</dt><dd>${c.direction}</dd></div>
        <div><dt>Agent</dt><dd>${agent.data ? html`<a href=${`${BASE}/agents/${c.agent_id}`}>${agent.data.name}</a>` : html`<span class="mono small">${c.agent_id}</span>`}</dd></div>
        <div><dt>Number</dt><dd>${c.phone_number ?? "–"}${c.from_number ? ` (from ${c.from_number})` : ""}</dd></div>
        <div><dt>Created</dt><dd>${formatDateTime(c.created_at)}</dd></div>
        <div><dt>Answered</dt><dd>${formatDateTime(c.answered_at)}</dd></div>
        <div><dt>Ended</dt><dd>${formatDateTime(c.ended_at)}</dd></div>
        <div><dt>Duration</dt><dd>${formatDuration(c.duration)}</dd></div>
        <div><dt>Recorded</dt><dd>${c.record ? "yes" : "no"}</dd></div>
      </dl>
      ${Object.keys(c.metadata ?? {}).length ? html`<details><summary>Metadata</summary><pre>${JSON.stringify(c.metadata, null, 2)}</pre></details>` : null}
    </section>
    ${c.status === "in_progress" ? html`<${CallSupervision} callId=${c.id} />` : null}
    <div class="call-grid">
      <section class="card" aria-labelledby="call-transcript">
        <h2 id="call-transcript">Transcript</h2>
        <${Transcript} transcript=${c.transcript} audio=${audio} playable=${Boolean(recording)} playingAt=${playingAt} />
      </section>
      <div>
        <section class="card" aria-labelledby="call-recording">
          <h2 id="call-recording">Recording</h2>
          ${recording
            ? html`
                <audio ref=${audio} controls preload="metadata" src=${recording} onTimeUpdate=${(e) => setPlayingAt(e.currentTarget.currentTime)}>
                  <a href=${recording}>Download the recording</a>
                </audio>
                <p class="small"><a href=${recording} download=${`${c.id}.wav`}>Download the WAV</a> (stereo: caller left, agent right)</p>
              `
            : html`<p class="muted">${c.record ? (live ? "The recording comes when the call ends." : "No recording.") : "This call was not recorded."}</p>`}
        </section>
        <section class="card" aria-labelledby="call-analysis">
          <h2 id="call-analysis">Analysis</h2>
          <${Analysis} analysis=${c.analysis} />
        </section>
      </div>
    </div>
    <section class="card" aria-labelledby="call-tool-calls">
      <h2 id="call-tool-calls">Tool calls</h2>
      <${ToolCalls} toolCalls=${c.tool_calls} live=${live} />
    </section>
    <section class="card" aria-labelledby="call-latency">
      <h2 id="call-latency">Latency per agent turn</h2>
      ${c.latency ? html`<${LatencyChart} latency=${c.latency} />` : html`<p class="muted">${live ? "Measured while the call runs; shown when it ends." : "No latency recorded for this call."}</p>`}
    </section>
    ${live ? null : html`<${CallEvents} call=${c} />`}
  `;
}
