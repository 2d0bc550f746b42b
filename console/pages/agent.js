// One agent's form: create (/agents/new) or edit (/agents/:id) every field the API takes.
// Values go to the API as typed; its own validation answers, shown next to each field.
// An existing agent has two tabs: Settings (the form) and Tests (agent-tests.js).
import { useEffect, useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { CheckboxField, FormError, SelectField, TextArea, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading, Notice, StatusBadge } from "../components/feedback.js";
import { TabPanel, Tabs } from "../components/tabs.js";
import { AgentTests } from "./agent-tests.js";
import { api } from "../lib/api.js";
import { AGENT_MODELS, ENDPOINTING_MODES } from "../lib/api-values.js";
import { formatDateTime, formatDuration } from "../lib/format.js";
import { BASE, currentQuery, navigate, setQuery } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

const FIELDS = [
  "name", "system_prompt", "first_message", "voice_id", "language", "model", "status", "temperature", "max_tokens",
  "interruption_threshold", "end_call_phrases", "endpointing_mode", "endpointing_ms", "transfer_enabled", "transfer_number",
  "transfer_message", "reminder_minutes_before", "reminder_call", "reminder_call_inbound", "analysis_fields", "metadata",
];

const TABS = [
  { id: "settings", label: "Settings" },
  { id: "tests", label: "Tests" },
];

const EMPTY = {
  name: "", system_prompt: "", first_message: "", voice_id: "", language: "", model: "llm-large", status: "active",
  temperature: "", max_tokens: "", interruption_threshold: "", end_call_phrases: "", endpointing_mode: "adaptive",
  endpointing_ms: "", transfer_enabled: false, transfer_number: "", transfer_message: "", reminder_minutes_before: "1440",
  reminder_call: false, reminder_call_inbound: false, analysis_fields: "[]", metadata: "{}",
};

/** The agent as form values (strings for inputs). */
function valuesOf(agent) {
  const text = (v) => (v === null || v === undefined ? "" : String(v));
  return {
    ...Object.fromEntries(FIELDS.map((f) => [f, text(agent[f])])),
    end_call_phrases: agent.end_call_phrases.join("\n"),
    transfer_enabled: agent.transfer_enabled,
    reminder_call: agent.reminder_call,
    reminder_call_inbound: agent.reminder_call_inbound,
    analysis_fields: JSON.stringify(agent.analysis_fields, null, 2),
    metadata: JSON.stringify(agent.metadata, null, 2),
  };
}

/** A number as typed: numeric text becomes a number, anything else goes as is for the API to judge. */
function numberOf(text) {
  const trimmed = text.trim();
  return trimmed !== "" && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

/** The request body from the form values; for an edit, only what changed. Local problems: JSON that does not parse. */
function bodyOf(values, original) {
  const problems = {};
  const json = (name, empty) => {
    if (values[name].trim() === "") return empty;
    try {
      return JSON.parse(values[name]);
    } catch (err) {
      problems[name] = [`is not valid JSON (${err.message})`];
      return undefined;
    }
  };
  const creating = !original;
  const optionalText = (name) => (values[name] === "" ? (creating ? undefined : null) : values[name]);
  const optionalNumber = (name) => (values[name].trim() === "" ? (creating ? undefined : null) : numberOf(values[name]));
  const full = {
    name: values.name,
    system_prompt: values.system_prompt,
    first_message: optionalText("first_message"),
    voice_id: values.voice_id === "" ? undefined : values.voice_id,
    language: values.language.trim() === "" ? undefined : values.language.trim(),
    model: values.model,
    status: creating ? undefined : values.status,
    temperature: optionalNumber("temperature"),
    max_tokens: optionalNumber("max_tokens"),
    interruption_threshold: optionalNumber("interruption_threshold"),
    end_call_phrases: values.end_call_phrases.split("\n").map((p) => p.trim()).filter(Boolean),
    endpointing_mode: values.endpointing_mode,
    // Left empty, the mode's default applies (and a changed mode resets it).
    endpointing_ms: values.endpointing_ms.trim() === "" ? undefined : numberOf(values.endpointing_ms),
    transfer_enabled: values.transfer_enabled,
    transfer_number: values.transfer_number.trim() === "" ? (creating ? undefined : null) : values.transfer_number.trim(),
    transfer_message: values.transfer_message === "" ? undefined : values.transfer_message,
    reminder_minutes_before: values.reminder_minutes_before.trim() === "" ? null : numberOf(values.reminder_minutes_before),
    reminder_call: values.reminder_call,
    reminder_call_inbound: values.reminder_call_inbound,
    analysis_fields: json("analysis_fields", []),
    metadata: json("metadata", {}),
  };
  const body = {};
  for (const [name, value] of Object.entries(full)) {
    if (value === undefined) continue;
    if (!creating && JSON.stringify(value) === JSON.stringify(original[name])) continue;
    body[name] = value;
  }
  return { body, problems };
}

function AgentSidebar({ agent }) {
  const details = useResource(() => api("GET", `/v1/agents/${agent.id}`, { query: { include: "stats,recent_calls" } }), [agent.id, agent.updated_at]);
  const stats = details.data?.stats;
  return html`
    <aside class="card side" aria-labelledby="agent-activity">
      <h2 id="agent-activity">Activity</h2>
      <${ErrorNotice} error=${details.error} />
      ${stats
        ? html`
            <dl class="stats">
              <div><dt>Calls</dt><dd>${stats.total_calls}</dd></div>
              <div><dt>Minutes billed</dt><dd>${stats.total_duration_minutes}</dd></div>
              <div><dt>Average call</dt><dd>${stats.avg_call_duration_seconds} s</dd></div>
              <div><dt>Success rate</dt><dd>${Math.round(stats.success_rate * 100)} %</dd></div>
            </dl>
          `
        : null}
      ${details.data?.recent_calls?.length
        ? html`
            <h3>Recent calls</h3>
            <ul class="plain">
              ${details.data.recent_calls.map(
                (call) => html`<li><a href=${`${BASE}/calls/${call.id}`}>${formatDateTime(call.created_at, true)}</a> <${StatusBadge} status=${call.status} /> ${formatDuration(call.duration)}</li>`,
              )}
            </ul>
          `
        : null}
    </aside>
  `;
}

export function AgentPage({ params }) {
  const id = params.id;
  const [notice, setNotice] = useState(history.state?.notice ?? null);
  const agent = useResource(() => (id ? api("GET", `/v1/agents/${id}`) : Promise.resolve(null)), [id]);
  const voices = useResource(() => api("GET", "/v1/voices"), []);
  const form = useForm(EMPTY);
  const [deleteError, setDeleteError] = useState(null);
  // The tab (and the Tests tab's run) live in the address, so a reload or a shared link opens them.
  const [tab, setTab] = useState(currentQuery().get("tab") === "tests" ? "tests" : "settings");
  const selectTab = (next) => {
    setTab(next);
    setQuery(next === "tests" ? { tab: next } : {});
  };

  useEffect(() => {
    if (agent.data) form.reset(valuesOf(agent.data));
  }, [agent.data]);
  useEffect(() => {
    if (!id && voices.data?.data?.length && form.values.voice_id === "") form.set("voice_id", voices.data.data[0].id);
  }, [voices.data]);

  const save = async (event) => {
    event.preventDefault();
    setNotice(null);
    const { body, problems } = bodyOf(form.values, agent.data);
    const saved = await form.submit(() => (id ? api("PATCH", `/v1/agents/${id}`, { body }) : api("POST", "/v1/agents", { body })), problems, event.currentTarget);
    if (!saved) return;
    if (!id) navigate(`/agents/${saved.id}`, { replace: true, state: { notice: `Agent ${saved.name} created.` } });
    else {
      agent.setData(saved);
      setNotice(Object.keys(body).length ? "Saved." : "Nothing changed.");
    }
  };
  const remove = async () => {
    if (!confirm(`Delete the agent ${agent.data.name}? Its calls stay; phone numbers it answered lose their default agent.`)) return;
    try {
      await api("DELETE", `/v1/agents/${id}`);
      navigate("/agents");
    } catch (err) {
      setDeleteError(err);
    }
  };

  if (id && agent.error) return html`<${PageHeader} title="Agent" /><${ErrorNotice} error=${agent.error} what="The agent could not be loaded" />`;
  if (id && !agent.data) return html`<${PageHeader} title="Agent" /><${Loading} />`;

  const voiceOptions = (voices.data?.data ?? []).map((v) => ({ value: v.id, label: `${v.name} (${v.id}, ${v.language}, ${v.gender}, ${v.sample_rate / 1000} kHz)` }));
  if (form.values.voice_id && !voiceOptions.some((o) => o.value === form.values.voice_id)) voiceOptions.unshift({ value: form.values.voice_id, label: form.values.voice_id });
  const languages = [...new Set((voices.data?.data ?? []).map((v) => v.language))];

  const settings = html`
    <div class=${id ? "with-side" : ""}>
      <form class="card agent-form" onSubmit=${save} novalidate aria-label=${id ? "Edit agent" : "Create agent"}>
        <${FormError} error=${form.error} fields=${FIELDS} />
        <fieldset>
          <legend>Basics</legend>
          <${TextField} form=${form} name="name" id="agent-name" label="Name" maxlength="200" />
          <${TextArea} form=${form} name="system_prompt" id="agent-system-prompt" label="System prompt" rows="5" hint="What the agent is for and how it behaves (up to 20,000 characters)." />
          <${TextArea} form=${form} name="first_message" id="agent-first-message" label="First message" rows="2" hint="The greeting; {{customer_name}} and other context values are filled in. Empty: none." />
          <div class="row">
            <${SelectField} form=${form} name="voice_id" id="agent-voice" label="Voice" options=${voiceOptions.length ? voiceOptions : [{ value: "", label: "Loading voices…" }]} />
            <${TextField} form=${form} name="language" id="agent-language" label="Language" placeholder="en-US" list="agent-languages" hint="A language of the voices (default en-US)." />
            <datalist id="agent-languages">${languages.map((l) => html`<option value=${l}></option>`)}</datalist>
          </div>
          <div class="row">
            <${SelectField} form=${form} name="model" id="agent-model" label="Model" options=${AGENT_MODELS} />
            ${id ? html`<${SelectField} form=${form} name="status" id="agent-status" label="Status" options=${["active", "inactive"]} hint="Inactive agents take no calls." />` : null}
          </div>
        </fieldset>
        <fieldset>
          <legend>Conversation</legend>
          <div class="row">
            <${TextField} form=${form} name="temperature" id="agent-temperature" label="Temperature" type="number" step="0.1" inputmode="decimal" placeholder="0.7" hint="0.0 to 1.0" />
            <${TextField} form=${form} name="max_tokens" id="agent-max-tokens" label="Max tokens" type="number" inputmode="numeric" placeholder="150" hint="1 to 4,096" />
            <${TextField} form=${form} name="interruption_threshold" id="agent-interruption-threshold" label="Interruption threshold" type="number" step="0.1" inputmode="decimal" placeholder="0.5" hint="0.0 (interrupts easily) to 1.0" />
          </div>
          <div class="row">
            <${SelectField} form=${form} name="endpointing_mode" id="agent-endpointing-mode" label="Endpointing" options=${ENDPOINTING_MODES} hint="adaptive: a complete-sounding turn ends sooner; fixed: always the silence below." />
            <${TextField} form=${form} name="endpointing_ms" id="agent-endpointing-ms" label="Endpointing silence (ms)" type="number" inputmode="numeric" placeholder=${form.values.endpointing_mode === "fixed" ? "500" : "1500"} hint="100 to 3,000; empty: the mode's default" />
          </div>
          <${TextArea} form=${form} name="end_call_phrases" id="agent-end-call-phrases" label="End-call phrases" rows="3" hint="One per line: the agent hangs up after saying one." />
        </fieldset>
        <fieldset>
          <legend>Transfer</legend>
          <${CheckboxField} form=${form} name="transfer_enabled" id="agent-transfer-enabled" label="The agent may transfer calls to a person" />
          <div class="row">
            <${TextField} form=${form} name="transfer_number" id="agent-transfer-number" label="Transfer number" type="tel" placeholder="+14155550100" hint="E.164; required when transfer is on." />
            <${TextField} form=${form} name="transfer_message" id="agent-transfer-message" label="Transfer message" placeholder="Please hold while I transfer you to a member of our team." />
          </div>
        </fieldset>
        <fieldset>
          <legend>Appointment reminders</legend>
          <div class="row">
            <${TextField} form=${form} name="reminder_minutes_before" id="agent-reminder-minutes" label="Reminder lead time (minutes)" type="number" inputmode="numeric" hint="5 to 10,080; empty: no reminders." />
            <${CheckboxField} form=${form} name="reminder_call" id="agent-reminder-call" label="Also call the customer at the reminder's time" />
            <${CheckboxField} form=${form} name="reminder_call_inbound" id="agent-reminder-call-inbound" label="Also call customers who booked on an inbound call, at their caller ID (which can be forged)" />
          </div>
        </fieldset>
        <fieldset>
          <legend>Analysis and metadata</legend>
          <${TextArea} form=${form} name="analysis_fields" id="agent-analysis-fields" class="mono" rows="4" label="Analysis fields (JSON)" hint=${'Up to 30 of {"name", "type", "description", "enum"?}: the values each call\'s analysis reads from the conversation.'} />
          <${TextArea} form=${form} name="metadata" id="agent-metadata" class="mono" rows="6" label="Metadata (JSON)" hint=${'Free values; the rules agent reads faq ([{"question", "answer"}]), business_name, booking_hours, timezone...'} />
        </fieldset>
        <div class="form-actions">
          <button type="submit" disabled=${form.busy}>${form.busy ? "Saving…" : id ? "Save changes" : "Create agent"}</button>
          ${id ? html`<button type="button" class="danger" onClick=${remove}>Delete agent</button>` : html`<a class="button secondary" href=${`${BASE}/agents`}>Cancel</a>`}
        </div>
        <${ErrorNotice} error=${deleteError} what="The agent was not deleted" />
      </form>
      ${id ? html`<${AgentSidebar} agent=${agent.data} />` : null}
    </div>
  `;

  return html`
    <${PageHeader} title=${id ? agent.data.name : "New agent"} subtitle=${id ? html`<span class="mono">${id}</span> · updated ${formatDateTime(agent.data.updated_at)}` : "Every field but the name and the system prompt has a default."}>
      ${id
        ? html`<button type="button" disabled=${agent.data.status !== "active"} onClick=${() => navigate(`/agents/${id}/talk`, { state: { autostart: true } })}>Talk</button>`
        : null}
    <//>
    ${notice ? html`<${Notice} kind="ok">${notice}<//>` : null}
    ${id ? html`<${Tabs} tabs=${TABS} selected=${tab} onSelect=${selectTab} label="Agent" idPrefix="agent" />` : null}
    ${id && tab === "tests"
      ? html`<${TabPanel} idPrefix="agent" tab="tests">
          <${AgentTests} agentId=${id} runId=${currentQuery().get("run")} onRunChange=${(run) => setQuery({ tab: "tests", run })} />
        <//>`
      : id
        ? html`<${TabPanel} idPrefix="agent" tab="settings">${settings}<//>`
        : settings}
  `;
}
