// A browser call with an agent: microphone in, the agent's voice out, the live transcript,
// each turn's latency and the call's state; hang up, then open the call's page.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { CheckboxField, FormError, TextArea, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading } from "../components/feedback.js";
import { LatencyChart, turnFromMetrics } from "../components/latency-chart.js";
import { BrowserCall } from "../audio/browser-call.js";
import { api } from "../lib/api.js";
import { formatClock, formatMs, label } from "../lib/format.js";
import { BASE } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

const STATE_TEXT = {
  connecting: "Connecting…",
  listening: "Listening to you",
  thinking: "The agent is thinking",
  speaking: "The agent is speaking",
  ended: "Call ended",
};
const KEYS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "0", "#"];

function initialCall() {
  return { phase: "idle", callId: null, state: null, transcript: [], partial: "", turns: [], ended: null, error: null, level: 0, notes: [] };
}

export function TalkPage({ params }) {
  const agent = useResource(() => api("GET", `/v1/agents/${params.id}`), [params.id]);
  const options = useForm({ record: true, max_duration: "", context: "" });
  const [call, setCall] = useState(initialCall);
  const [muted, setMuted] = useState(false);
  const controller = useRef(null);
  const update = (change) => setCall((previous) => ({ ...previous, ...(typeof change === "function" ? change(previous) : change) }));

  const onEvent = (message) => {
    switch (message.type) {
      case "connected":
        update({ phase: "live", callId: message.call_id });
        break;
      case "state":
        update({ state: message.state });
        break;
      case "transcript":
        update((c) => ({
          transcript: [...c.transcript, { role: message.role, content: message.content, timestamp: message.timestamp }].sort((a, b) => a.timestamp - b.timestamp),
          partial: message.role === "user" ? "" : c.partial,
        }));
        break;
      case "partial_transcript":
        update({ partial: message.text });
        break;
      case "turn_metrics":
        update((c) => ({ turns: [...c.turns.filter((t) => t.turn_id !== message.turn_id), turnFromMetrics(message)].sort((a, b) => a.turn_id - b.turn_id) }));
        break;
      case "interruption":
        update((c) => ({ notes: [...c.notes, `You interrupted turn ${message.turn_id} after ${formatMs(message.played_ms)}.`] }));
        break;
      case "tool_call":
        // A browser call is told a tool's name and outcome only (docs/media.md): no error text.
        update((c) => ({ notes: [...c.notes, `Tool ${message.name}: ${message.ok ? "done" : message.error ? `failed (${message.error})` : "failed"}.`] }));
        break;
      case "transfer":
        update((c) => ({ notes: [...c.notes, `The agent transferred the call${message.number ? ` to ${message.number}` : ""}.`] }));
        break;
      case "ended":
        update({ ended: { reason: message.reason, durationMs: message.duration_ms }, state: "ended" });
        break;
      case "error":
        update({ error: { message: message.message, code: message.code } });
        break;
      case "local":
        if (message.what === "created") update({ callId: message.call_id });
        else if (message.what === "microphone") update({ level: message.level });
        else if (message.what === "closed") update((c) => ({ phase: c.phase === "failed" ? "failed" : "ended", state: "ended" }));
        break;
      default:
        break;
    }
  };

  const start = async () => {
    let context;
    if (options.values.context.trim()) {
      try {
        context = JSON.parse(options.values.context);
      } catch (err) {
        await options.submit(async () => undefined, { context: [`is not valid JSON (${err.message})`] });
        return;
      }
    }
    const maxText = options.values.max_duration.trim();
    const maxDuration = maxText === "" ? undefined : Number.isFinite(Number(maxText)) ? Number(maxText) : maxText;
    setCall({ ...initialCall(), phase: "starting" });
    setMuted(false);
    const browserCall = new BrowserCall(onEvent);
    controller.current = browserCall;
    const started = await options.submit(async () => {
      await browserCall.start({ agentId: params.id, record: options.values.record, context, maxDuration });
      return true;
    });
    if (!started) update({ phase: "failed" });
  };

  const hangUp = () => {
    update({ phase: "ending" });
    controller.current?.hangUp();
  };

  // Started with the Talk button: the call begins at once (the click allows the audio to play).
  useEffect(() => {
    if (history.state?.autostart) {
      history.replaceState({ ...history.state, autostart: false }, "");
      void start();
    }
    const onUnload = () => controller.current?.hangUp();
    window.addEventListener("beforeunload", onUnload);
    return () => {
      window.removeEventListener("beforeunload", onUnload);
      controller.current?.hangUp();
    };
  }, []);

  const live = call.phase === "live" || call.phase === "starting" || call.phase === "ending";
  const name = agent.data?.name ?? params.id;

  return html`
    <${PageHeader} title=${`Talk to ${name}`} subtitle="A call from this browser: your microphone to the agent, its voice back. Use headphones, or rely on echo cancellation.">
      <a class="button secondary" href=${`${BASE}/agents/${params.id}`}>Agent settings</a>
    <//>
    <${ErrorNotice} error=${agent.error} what="The agent could not be loaded" />
    ${!live
      ? html`
          <form class="card" onSubmit=${(e) => { e.preventDefault(); void start(); }} novalidate aria-label="Start a browser call">
            <${FormError} error=${options.error} fields=${["record", "max_duration", "context", "agent_id"]} />
            ${options.errors.agent_id ? html`<p class="field-error">${options.errors.agent_id.join(" ")}</p>` : null}
            <div class="row">
              <${CheckboxField} form=${options} name="record" id="talk-record" label="Record the call" />
              <${TextField} form=${options} name="max_duration" id="talk-max-duration" label="Longest call (seconds)" type="number" inputmode="numeric" placeholder="3600" hint="1 to 3,600" />
            </div>
            <${TextArea} form=${options} name="context" id="talk-context" class="mono" rows="2" label="Context (JSON)" placeholder='{"customer_name": "Ada"}' hint="Values for the agent's {{placeholders}}." />
            <button type="submit" class="call-button" disabled=${agent.data?.status === "inactive"}>${call.phase === "idle" ? "Start call" : "Call again"}</button>
          </form>
        `
      : null}
    ${call.phase !== "idle"
      ? html`
          <section class="card talk" aria-labelledby="talk-status">
            <div class="talk-bar">
              <p id="talk-status" class=${`call-state state-${call.state ?? call.phase}`} role="status" aria-live="polite">
                ${call.phase === "starting" && !call.state ? "Starting the call…" : STATE_TEXT[call.state] ?? label(call.phase)}
              </p>
              ${live
                ? html`
                    <label class="meter-label" for="mic-level">Microphone</label>
                    <meter id="mic-level" min="0" max="1" low="0.05" high="0.9" value=${muted ? 0 : call.level}></meter>
                    <button type="button" class="secondary" aria-pressed=${muted ? "true" : "false"} onClick=${() => { setMuted(!muted); controller.current?.setMuted(!muted); }}>${muted ? "Unmute" : "Mute"}</button>
                    <button type="button" class="danger hangup" onClick=${hangUp} disabled=${call.phase === "ending"}>${call.phase === "ending" ? "Hanging up…" : "Hang up"}</button>
                  `
                : null}
            </div>
            ${call.error ? html`<div class="alert alert-error" role="alert">${call.error.message} <code>${call.error.code}</code></div>` : null}
            ${call.ended
              ? html`<p class="ended" role="status">Call ended: ${label(call.ended.reason)}, ${formatClock(call.ended.durationMs / 1000)}.</p>`
              : null}
            ${call.callId && !live
              ? html`<p><a class="button" href=${`${BASE}/calls/${call.callId}`}>Open the call's page</a> <span class="muted small mono">${call.callId}</span></p>`
              : null}
            <h2>Transcript</h2>
            <ol class="transcript live-transcript" aria-live="polite" aria-relevant="additions">
              ${call.transcript.map(
                (s) => html`<li class=${`line line-${s.role}`}><span class="who">${s.role === "agent" ? "Agent" : "You"}</span> <span class="when">${formatClock(s.timestamp)}</span> <span class="what">${s.content}</span></li>`,
              )}
              ${call.partial ? html`<li class="line line-user partial" aria-hidden="true"><span class="who">You</span> <span class="what">${call.partial}…</span></li>` : null}
            </ol>
            ${call.transcript.length === 0 && call.phase !== "failed" ? html`<${Loading} text="Waiting for the first words…" />` : null}
            ${call.notes.length ? html`<ul class="notes">${call.notes.map((n) => html`<li>${n}</li>`)}</ul>` : null}
            ${live
              ? html`
                  <details class="keypad-wrap">
                    <summary>Keypad</summary>
                    <div class="keypad" role="group" aria-label="Keypad">
                      ${KEYS.map((k) => html`<button type="button" class="secondary" onClick=${() => controller.current?.sendDigit(k)} aria-label=${`Key ${k}`}>${k}</button>`)}
                    </div>
                  </details>
                `
              : null}
            <h2>Latency per turn</h2>
            <${LatencyChart} latency=${{ turns: call.turns }} title="Latency of this call's agent turns" />
          </section>
        `
      : null}
  `;
}
