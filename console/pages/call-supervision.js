// A live call's supervision panel (docs/supervision.md): listen to both sides, have the agent
// say a line, whisper guidance to it, take the call over with the microphone and hand it back.
// Shown on the call's page while the call is in progress.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../components/html.js";
import { TextField, useForm } from "../components/form.js";
import { ErrorNotice } from "../components/feedback.js";
import { CallSupervisor } from "../audio/call-supervisor.js";
import { api } from "../lib/api.js";
import { formatClock } from "../lib/format.js";
import { keyGrants } from "../lib/key-permissions.js";
import { useResource } from "../lib/use-resource.js";

const AGENT_STATE = {
  listening: "the agent is listening",
  thinking: "the agent is thinking",
  speaking: "the agent is speaking",
};
const SUPERVISOR_NOTE = {
  say: "The agent says a supervisor's line.",
  whisper: "A supervisor whispered to the agent.",
  takeover: "A supervisor took the call over: the agent is silent.",
  handback: "The agent has the call again.",
};
/** Lines kept in the live transcript; the whole one is on the call's page once it ends. */
const MAX_LINES = 200;

function statusText(phase, agentState) {
  if (phase === "connecting") return "Connecting…";
  if (phase === "listening") return `Listening${agentState ? `: ${AGENT_STATE[agentState] ?? agentState}` : ""}.`;
  if (phase === "takeover") return "You have the call: the caller hears you, not the agent.";
  if (phase === "ended") return "The call ended.";
  return "Not listening.";
}

/** Say or whisper: one line of text sent to the call, the API's error shown by its field. */
function LineForm({ callId, action, id, label, hint, button, sent, disabled }) {
  const form = useForm({ text: "" });
  const [done, setDone] = useState(null);
  const send = async (event) => {
    event.preventDefault();
    setDone(null);
    const ok = await form.submit(() => api("POST", `/v1/calls/${callId}/${action}`, { body: { text: form.values.text } }), {}, event.currentTarget);
    if (ok) {
      setDone(sent(form.values.text.trim()));
      form.set("text", "");
    }
  };
  return html`
    <form class="line-form" onSubmit=${send} novalidate aria-label=${label}>
      <${TextField} form=${form} name="text" id=${id} label=${label} hint=${hint} maxlength="1000" disabled=${disabled} />
      ${form.error && !form.errors.text ? html`<${ErrorNotice} error=${form.error} />` : null}
      <button type="submit" class="secondary" disabled=${disabled || form.busy}>${button}</button>
      ${done ? html`<p class="muted small" role="status">${done}</p>` : null}
    </form>
  `;
}

export function CallSupervision({ callId }) {
  const grants = useResource(keyGrants, []);
  const mayAct = grants.data ? grants.data("calls:write") : false;
  const [phase, setPhase] = useState("idle");
  const [agentState, setAgentState] = useState(null);
  const [levels, setLevels] = useState({ caller: 0, agent: 0 });
  const [lines, setLines] = useState([]);
  const [error, setError] = useState(null);
  /** The socket whose messages the page shows, and one being opened to replace it. */
  const supervisor = useRef(null);
  const pending = useRef(null);

  const add = (line) => setLines((previous) => [...previous, line].slice(-MAX_LINES));
  const onEvent = (owner, message) => {
    // Only the socket in use speaks for the page (not one being opened, nor one replaced).
    if (supervisor.current !== owner) return;
    if (message.type === "transcript") add({ kind: "line", role: message.role, content: message.content, timestamp: message.timestamp });
    else if (message.type === "state") setAgentState(message.state);
    else if (message.type === "supervisor") add({ kind: "note", text: SUPERVISOR_NOTE[message.action] ?? message.action });
    else if (message.type === "ended") setPhase("ended");
    else if (message.type === "local" && message.what === "levels") setLevels({ caller: message.caller, agent: message.agent });
    else if (message.type === "local" && message.what === "closed") {
      supervisor.current = null;
      setLevels({ caller: 0, agent: 0 });
      setPhase((previous) => (previous === "ended" ? "ended" : "idle"));
    }
  };

  /**
   * Opens a socket in `mode`. The one open before (listening, or a take-over) goes on speaking
   * for the page until the new one is connected and only then closes (closing a take-over hands
   * the call back), so nothing said meanwhile is missed. When the new one fails, the old stays.
   */
  const open = async (mode) => {
    setError(null);
    pending.current?.stop();
    const previous = supervisor.current;
    const next = new CallSupervisor(callId, (message) => onEvent(next, message));
    pending.current = next;
    setPhase("connecting");
    try {
      await next.start(mode);
      if (pending.current !== next) return next.stop();
      pending.current = null;
      supervisor.current = next;
      previous?.stop();
      setPhase(mode === "takeover" ? "takeover" : "listening");
    } catch (err) {
      if (pending.current !== next) return;
      pending.current = null;
      setError(err);
      setPhase(supervisor.current ? (supervisor.current.mode === "takeover" ? "takeover" : "listening") : "idle");
    }
  };
  const stop = () => {
    for (const ref of [pending, supervisor]) {
      const current = ref.current;
      ref.current = null;
      current?.stop();
    }
    setLevels({ caller: 0, agent: 0 });
    setPhase("idle");
  };

  // Leaving the page, within the console or not (a closed tab, another site), stops listening
  // and hands back a take-over: a socket a browser keeps open after the page is gone would
  // keep the agent silent.
  useEffect(() => {
    const leave = () => {
      pending.current?.stop();
      supervisor.current?.stop();
    };
    window.addEventListener("pagehide", leave);
    return () => {
      window.removeEventListener("pagehide", leave);
      leave();
    };
  }, []);

  const connected = phase === "listening" || phase === "takeover";
  return html`
    <section class="card supervision" aria-labelledby="call-supervision">
      <h2 id="call-supervision">Live supervision</h2>
      <p class="muted small">Hear both sides as they speak, have the agent say a line, guide it, or take the call over with your microphone. Use headphones: the caller would hear your speakers.</p>
      <div class="talk-bar">
        <p id="supervision-status" class=${`call-state state-${phase}`} role="status" aria-live="polite">${statusText(phase, agentState)}</p>
        ${phase === "listening" || phase === "idle" || phase === "connecting"
          ? html`<button type="button" onClick=${() => (phase === "listening" ? stop() : open("listen"))} disabled=${phase === "connecting"}>${phase === "listening" ? "Stop listening" : "Listen"}</button>`
          : null}
        ${phase === "takeover"
          ? html`<button type="button" class="danger" onClick=${() => open("listen")}>Hand back</button>`
          : html`<button type="button" class="secondary" onClick=${() => open("takeover")} disabled=${!mayAct || phase === "connecting" || phase === "ended"}>Take over</button>`}
        <label class="meter-label" for="supervision-caller-level">Caller</label>
        <meter id="supervision-caller-level" min="0" max="1" low="0.05" high="0.9" value=${levels.caller}></meter>
        <label class="meter-label" for="supervision-agent-level">${phase === "takeover" ? "Agent (you)" : "Agent"}</label>
        <meter id="supervision-agent-level" min="0" max="1" low="0.05" high="0.9" value=${levels.agent}></meter>
      </div>
      <${ErrorNotice} error=${error} what=${phase === "idle" ? "Could not listen" : undefined} />
      <${ErrorNotice} error=${grants.error} what="The key's permissions could not be read" />
      ${grants.data && !mayAct ? html`<p class="muted small">This key may listen only: Say, Whisper and Take over need the <code>calls:write</code> permission.</p>` : null}
      ${connected || lines.length
        ? html`
            <h3>Live transcript</h3>
            <ol class="transcript live-transcript" id="supervision-transcript" aria-live="polite" aria-relevant="additions">
              ${lines.map((l) =>
                l.kind === "note"
                  ? html`<li class="line note"><span class="what">${l.text}</span></li>`
                  : html`<li class=${`line line-${l.role}`}><span class="who">${l.role === "agent" ? "Agent" : "Caller"}</span> <span class="when">${formatClock(l.timestamp)}</span> <span class="what">${l.content}</span></li>`,
              )}
            </ol>
            ${lines.length === 0 ? html`<p class="muted small">Words appear here as they are said.</p>` : null}
          `
        : null}
      <div class="grid-2">
        <${LineForm}
          callId=${callId}
          action="say"
          id="supervision-say"
          label="Have the agent say"
          hint="Said next, in the agent's voice, and in the transcript as its words."
          button="Say"
          sent=${(text) => `Sent: the agent says “${text}” next.`}
          disabled=${!mayAct || phase === "ended"}
        />
        <${LineForm}
          callId=${callId}
          action="whisper"
          id="supervision-whisper"
          label="Whisper to the agent"
          hint="Guidance for its next replies, never spoken (a chat model follows it; the rules dialogue cannot)."
          button="Whisper"
          sent=${() => "Whispered: the agent has it for the rest of the call."}
          disabled=${!mayAct || phase === "ended"}
        />
      </div>
    </section>
  `;
}
