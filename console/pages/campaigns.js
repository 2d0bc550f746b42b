// Campaigns: progress, pause / resume / cancel, results as CSV, and a form to start one.
import { useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { FormError, SelectField, TextArea, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading, LoadMore, Notice, StatusBadge } from "../components/feedback.js";
import { api, listAll } from "../lib/api.js";
import { CONTACT_STATUSES } from "../lib/api-values.js";
import { formatDateTime, label } from "../lib/format.js";
import { useResource } from "../lib/use-resource.js";

const ACTIONS = {
  pause: (status) => status === "scheduled" || status === "running",
  resume: (status) => status === "paused",
  cancel: (status) => status !== "completed" && status !== "cancelled",
};

/** The results CSV needs the key, so it is fetched and handed to the browser as a file. */
async function downloadResults(campaign) {
  const csv = await api("GET", `/v1/campaigns/${campaign.id}/results.csv`, { text: true });
  const url = URL.createObjectURL(new Blob([csv], { type: "text/csv" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = `${campaign.id}-results.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function CampaignCard({ campaign, agentName, onChanged }) {
  const [state, setState] = useState({ busy: false, error: null });
  const counts = campaign.contacts;
  const done = counts.total - counts.pending - counts.calling;
  const act = async (action) => {
    if (action === "cancel" && !confirm(`Cancel ${campaign.name}? Contacts not yet called are cancelled.`)) return;
    setState({ busy: true, error: null });
    try {
      onChanged(action === "csv" ? await downloadResults(campaign) : await api("POST", `/v1/campaigns/${campaign.id}/${action}`));
      setState({ busy: false, error: null });
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  const progressId = `progress-${campaign.id}`;
  return html`
    <li class="card campaign">
      <div class="section-head">
        <h2>${campaign.name}</h2>
        <${StatusBadge} status=${campaign.status} />
      </div>
      <p class="muted small">
        <span class="mono">${campaign.id}</span> · agent ${agentName ?? campaign.agent_id}
        ${campaign.paused_reason ? html` · paused: ${label(campaign.paused_reason)}` : null}
      </p>
      <label for=${progressId}>${done} of ${counts.total} contacts done, ${counts.calling} calling, ${campaign.attempts} calls made</label>
      <progress id=${progressId} max=${Math.max(1, counts.total)} value=${done}>${Math.round((done / Math.max(1, counts.total)) * 100)} %</progress>
      <ul class="counts">
        ${CONTACT_STATUSES.filter((s) => counts[s] > 0).map((s) => html`<li><${StatusBadge} status=${s} /> ${counts[s]}</li>`)}
      </ul>
      <p class="small muted">
        Created ${formatDateTime(campaign.created_at, true)}${campaign.started_at ? ` · started ${formatDateTime(campaign.started_at, true)}` : ""}${campaign.finished_at ? ` · finished ${formatDateTime(campaign.finished_at, true)}` : ""}${campaign.estimated_finish_at ? ` · should finish ${formatDateTime(campaign.estimated_finish_at, true)}` : ""}
      </p>
      <div class="actions">
        ${ACTIONS.pause(campaign.status) ? html`<button type="button" class="secondary" disabled=${state.busy} onClick=${() => act("pause")}>Pause</button>` : null}
        ${ACTIONS.resume(campaign.status) ? html`<button type="button" disabled=${state.busy} onClick=${() => act("resume")}>Resume</button>` : null}
        ${ACTIONS.cancel(campaign.status) ? html`<button type="button" class="danger secondary" disabled=${state.busy} onClick=${() => act("cancel")}>Cancel</button>` : null}
        <button type="button" class="secondary" disabled=${state.busy} onClick=${() => act("csv")}>Results (CSV)</button>
      </div>
      <${ErrorNotice} error=${state.error} />
    </li>
  `;
}

/** Contacts typed one per line: `+15005551001` or `+15005551001, Ana` (the name fills {{customer_name}}). */
function contactsOf(text) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [phone, ...name] = line.split(",");
      const customer = name.join(",").trim();
      return customer ? { phone: phone.trim(), context: { customer_name: customer } } : { phone: phone.trim() };
    });
}

/** The API's field problems for this form's inputs: `settings.x` and `contacts[3].phone` land on their inputs. */
function errorsOf(error) {
  const errors = {};
  for (const problem of error?.details?.fields ?? []) {
    const path = String(problem.field);
    const key = path.startsWith("settings.calling_hours") ? "calling_hours" : path.startsWith("settings.") ? path.split(".")[1] : path.split(/[.[]/)[0];
    const line = path.match(/^contacts\[(\d+)\]/);
    const text = line ? `line ${Number(line[1]) + 1}: ${problem.message}` : path.includes(".") || path.includes("[") ? `${path}: ${problem.message}` : problem.message;
    (errors[key] ??= []).push(text);
  }
  return errors;
}

const FORM_FIELDS = ["name", "agent_id", "contacts", "max_concurrent", "schedule", "calling_hours", "timezone"];

function NewCampaign({ agents, onCreated }) {
  const form = useForm({ name: "", agent_id: "", contacts: "", max_concurrent: "", schedule: "", start: "", end: "", timezone: "" });
  const create = async (event) => {
    event.preventDefault();
    const v = form.values;
    const settings = {};
    if (v.max_concurrent.trim()) settings.max_concurrent = Number.isFinite(Number(v.max_concurrent)) ? Number(v.max_concurrent) : v.max_concurrent;
    if (v.schedule) settings.schedule = new Date(v.schedule).toISOString();
    if (v.start || v.end) settings.calling_hours = { start: v.start, end: v.end };
    if (v.timezone.trim()) settings.timezone = v.timezone.trim();
    const body = { name: v.name, agent_id: v.agent_id, contacts: contactsOf(v.contacts), ...(Object.keys(settings).length ? { settings } : {}) };
    const created = await form.submit(() => api("POST", "/v1/campaigns", { body }), {}, event.currentTarget);
    if (created) {
      form.reset({ name: "", agent_id: "", contacts: "", max_concurrent: "", schedule: "", start: "", end: "", timezone: "" });
      onCreated(created);
    }
  };
  const shown = { ...form, errors: errorsOf(form.error) };
  return html`
    <form class="card" onSubmit=${create} novalidate aria-labelledby="new-campaign">
      <h2 id="new-campaign">New campaign</h2>
      <${FormError} error=${form.error} others=${Object.entries(shown.errors).filter(([k]) => !FORM_FIELDS.includes(k)).flatMap(([, m]) => m)} />
      <div class="row">
        <${TextField} form=${shown} name="name" id="campaign-name" label="Name" />
        <${SelectField} form=${shown} name="agent_id" id="campaign-agent" label="Agent" options=${[{ value: "", label: "Choose an agent" }, ...agents.map((a) => ({ value: a.id, label: a.name }))]} />
      </div>
      <${TextArea} form=${shown} name="contacts" id="campaign-contacts" class="mono" rows="5" label="Contacts" placeholder=${"+15005551001, Ana\n+15005551002, Ben"} hint="One per line: the number (E.164), then optionally a comma and the customer's name." />
      <div class="row">
        <${TextField} form=${shown} name="max_concurrent" id="campaign-max-concurrent" label="Calls at once" type="number" inputmode="numeric" placeholder="5" />
        <${TextField} form=${shown} name="schedule" id="campaign-schedule" label="Start at" type="datetime-local" hint="Empty: now." />
        <${TextField} form=${shown} name="timezone" id="campaign-timezone" label="Time zone" placeholder="America/New_York" hint="For contacts whose zone is not known." />
      </div>
      <fieldset class=${shown.errors.calling_hours ? "has-error" : ""}>
        <legend>Calling hours (each contact's local time; default 08:00 to 21:00)</legend>
        <div class="row">
          <${TextField} form=${shown} name="start" id="campaign-hours-start" label="From" type="time" />
          <${TextField} form=${shown} name="end" id="campaign-hours-end" label="To" type="time" />
        </div>
        ${shown.errors.calling_hours ? html`<p class="field-error">${shown.errors.calling_hours.join(" ")}</p>` : null}
      </fieldset>
      <button type="submit" disabled=${form.busy}>Create campaign</button>
    </form>
  `;
}

export function CampaignsPage() {
  const [pages, setPages] = useState(1);
  const [created, setCreated] = useState(null);
  const list = useResource(() => api("GET", "/v1/campaigns", { query: { limit: Math.min(100, 10 * pages) } }), [pages], {
    pollMs: 5000,
    shouldPoll: (page) => page.data.some((c) => c.status === "running" || c.status === "scheduled"),
  });
  const agents = useResource(() => listAll("/v1/agents", {}, 300), []);
  const agentName = Object.fromEntries((agents.data ?? []).map((a) => [a.id, a.name]));

  return html`
    <${PageHeader} title="Campaigns" subtitle="Outbound calls to a list of contacts, within their calling hours." />
    ${created ? html`<${Notice} kind="ok">Campaign ${created.name} created (${created.status}).<//>` : null}
    <${ErrorNotice} error=${list.error} what="Campaigns could not be loaded" />
    ${list.data === undefined && !list.error ? html`<${Loading} />` : null}
    ${list.data && list.data.data.length === 0 ? html`<p class="empty">No campaigns yet.</p>` : null}
    <ul class="campaigns">
      ${(list.data?.data ?? []).map((c) => html`<${CampaignCard} key=${c.id} campaign=${c} agentName=${agentName[c.agent_id]} onChanged=${() => list.reload()} />`)}
    </ul>
    <${LoadMore} page=${list.data} onMore=${() => setPages(pages + 1)} busy=${list.loading} />
    <${NewCampaign} agents=${(agents.data ?? []).filter((a) => a.status === "active")} onCreated=${(c) => { setCreated(c); void list.reload(); }} />
  `;
}
