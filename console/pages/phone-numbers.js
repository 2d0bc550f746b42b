// Phone numbers: each number's default agent (who answers its inbound calls), release, and
// registering a number the account holds (pending until the operator approves it).
import { useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { FormError, SelectField, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading, LoadMore, Notice, StatusBadge } from "../components/feedback.js";
import { api, listAll } from "../lib/api.js";
import { formatDateTime } from "../lib/format.js";
import { useResource } from "../lib/use-resource.js";

const REGISTER_FIELDS = ["phone_number", "country", "friendly_name", "region", "default_agent_id"];

function NumberRow({ number, agents, onChanged }) {
  const [state, setState] = useState({ busy: false, error: null, saved: false });
  const change = async (body, question) => {
    if (question && !confirm(question)) return;
    setState({ busy: true, error: null, saved: false });
    try {
      const updated = body === null ? await api("DELETE", `/v1/phone-numbers/${number.id}`) : await api("PATCH", `/v1/phone-numbers/${number.id}`, { body });
      setState({ busy: false, error: null, saved: true });
      onChanged(updated);
    } catch (error) {
      setState({ busy: false, error, saved: false });
    }
  };
  const selectId = `default-agent-${number.id}`;
  return html`
    <tr>
      <td data-label="Number"><strong>${number.phone_number}</strong><div class="muted small">${number.friendly_name}</div></td>
      <td data-label="Country">${number.country}${number.region ? html`<div class="muted small">${number.region}</div>` : null}</td>
      <td data-label="Status"><${StatusBadge} status=${number.status} /></td>
      <td data-label="Default agent">
        <label class="visually-hidden" for=${selectId}>Default agent of ${number.phone_number}</label>
        <select id=${selectId} value=${number.default_agent_id ?? ""} disabled=${state.busy || number.status === "inactive"} onChange=${(e) => change({ default_agent_id: e.currentTarget.value || null })}>
          <option value="">none (inbound calls are refused)</option>
          ${agents.map((a) => html`<option value=${a.id}>${a.name}</option>`)}
          ${number.default_agent_id && !agents.some((a) => a.id === number.default_agent_id) ? html`<option value=${number.default_agent_id}>${number.default_agent_id}</option>` : null}
        </select>
        <span class="small" role="status">${state.saved ? " Saved." : ""}</span>
        ${state.error ? html`<p class="field-error">${state.error.message} <code>${state.error.code}</code></p>` : null}
      </td>
      <td data-label="Added">${formatDateTime(number.created_at, true)}</td>
      <td class="actions-cell"><div class="row-actions">
        ${number.status !== "inactive"
          ? html`<button type="button" class="danger secondary" disabled=${state.busy} onClick=${() => change(null, `Release ${number.phone_number}? It stops answering and placing calls.`)}>Release</button>`
          : null}
      </div></td>
    </tr>
  `;
}

export function PhoneNumbersPage() {
  const [pages, setPages] = useState(1);
  const list = useResource(() => api("GET", "/v1/phone-numbers", { query: { limit: Math.min(100, 25 * pages) } }), [pages]);
  const agents = useResource(() => listAll("/v1/agents", { status: "active" }, 300), []);
  const form = useForm({ phone_number: "", country: "", friendly_name: "", region: "", default_agent_id: "" });
  const [registered, setRegistered] = useState(null);

  const register = async (event) => {
    event.preventDefault();
    const body = {};
    for (const name of REGISTER_FIELDS) if (form.values[name].trim() !== "") body[name] = form.values[name].trim();
    const created = await form.submit(() => api("POST", "/v1/phone-numbers", { body }), {}, event.currentTarget);
    if (created) {
      setRegistered(created);
      form.reset({ phone_number: "", country: "", friendly_name: "", region: "", default_agent_id: "" });
      void list.reload();
    }
  };

  return html`
    <${PageHeader} title="Phone numbers" subtitle="Inbound calls to an active number are answered by its default agent." />
    <${ErrorNotice} error=${list.error} what="Numbers could not be loaded" />
    <${ErrorNotice} error=${agents.error} what="Agents could not be loaded" />
    ${list.data === undefined && !list.error ? html`<${Loading} />` : null}
    ${list.data && list.data.data.length === 0 ? html`<p class="empty">No numbers yet. The operator adds them with <code>parley admin number add</code>, or register one below.</p>` : null}
    ${list.data?.data.length
      ? html`
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">Phone numbers</caption>
              <thead><tr><th scope="col">Number</th><th scope="col">Country</th><th scope="col">Status</th><th scope="col">Default agent</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                ${list.data.data.map((number) => html`<${NumberRow} key=${number.id} number=${number} agents=${agents.data ?? []} onChanged=${() => list.reload()} />`)}
              </tbody>
            </table>
          </div>
        `
      : null}
    <${LoadMore} page=${list.data} onMore=${() => setPages(pages + 1)} busy=${list.loading} />
    <form class="card" onSubmit=${register} novalidate aria-labelledby="register-number">
      <h2 id="register-number">Register a number</h2>
      <p class="muted small">For a number the account holds at its carrier. It stays pending, answering nothing, until the operator approves it (<code>parley admin number approve</code>).</p>
      ${registered ? html`<${Notice} kind="ok">${registered.phone_number} registered: ${registered.status}.<//>` : null}
      <${FormError} error=${form.error} fields=${REGISTER_FIELDS} />
      <div class="row">
        <${TextField} form=${form} name="phone_number" id="number-phone" label="Number" type="tel" placeholder="+14155550100" hint="E.164" />
        <${TextField} form=${form} name="country" id="number-country" label="Country" placeholder="US" maxlength="2" hint="ISO 3166-1 two-letter code" />
      </div>
      <div class="row">
        <${TextField} form=${form} name="friendly_name" id="number-friendly-name" label="Friendly name" placeholder="Front desk" />
        <${TextField} form=${form} name="region" id="number-region" label="Region" placeholder="CA" />
        <${SelectField} form=${form} name="default_agent_id" id="number-default-agent" label="Default agent" options=${[{ value: "", label: "none" }, ...(agents.data ?? []).map((a) => ({ value: a.id, label: a.name }))]} />
      </div>
      <button type="submit" disabled=${form.busy}>Register</button>
    </form>
  `;
}
