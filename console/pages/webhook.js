// One webhook: its settings, its delivery log (each delivery with its attempts), redelivery
// and a test delivery.
import { useEffect, useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { FormError, SelectField, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading, LoadMore, Notice, StatusBadge } from "../components/feedback.js";
import { EventChoice, eventsFromChoice } from "../components/event-choice.js";
import { api } from "../lib/api.js";
import { DELIVERY_STATUSES } from "../lib/api-values.js";
import { formatDateTime } from "../lib/format.js";
import { BASE, navigate } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

const FIELDS = ["url", "events", "description", "status"];

function Delivery({ webhookId, delivery, onChanged }) {
  const [state, setState] = useState({ busy: false, error: null });
  const redeliver = async () => {
    setState({ busy: true, error: null });
    try {
      onChanged(await api("POST", `/v1/webhooks/${webhookId}/deliveries/${delivery.id}/redeliver`));
      setState({ busy: false, error: null });
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  const last = delivery.attempts.at(-1);
  return html`
    <tr>
      <td data-label="Event"><code>${delivery.event}</code><div class="muted small mono">${delivery.id}</div></td>
      <td data-label="Status"><${StatusBadge} status=${delivery.status} />${delivery.next_attempt_at ? html`<div class="muted small">next try ${formatDateTime(delivery.next_attempt_at, true)}</div>` : null}</td>
      <td data-label="Attempts">
        <details>
          <summary>${delivery.attempt_count} attempt${delivery.attempt_count === 1 ? "" : "s"}${last ? `, last HTTP ${last.status_code ?? "none"}` : ""}</summary>
          <ol class="attempts">
            ${delivery.attempts.map(
              (a) => html`<li>${formatDateTime(a.started_at)}: HTTP ${a.status_code ?? "none"} in ${a.duration_ms} ms${a.error ? html`, <span class="error-text">${a.error}</span>` : null}${a.response_body ? html`<pre>${a.response_body}</pre>` : null}</li>`,
            )}
          </ol>
        </details>
      </td>
      <td data-label="Created">${formatDateTime(delivery.created_at, true)}</td>
      <td class="actions-cell"><div class="row-actions">
        <button type="button" class="secondary" disabled=${state.busy || delivery.status === "pending" || delivery.status === "sending"} onClick=${redeliver}>Redeliver</button>
        </div>
        ${state.error ? html`<p class="field-error">${state.error.message} <code>${state.error.code}</code></p>` : null}
      </td>
    </tr>
  `;
}

export function WebhookPage({ params }) {
  const id = params.id;
  const webhook = useResource(() => api("GET", `/v1/webhooks/${id}`), [id]);
  const [filter, setFilter] = useState("");
  const [pages, setPages] = useState(1);
  const deliveries = useResource(() => api("GET", `/v1/webhooks/${id}/deliveries`, { query: { limit: Math.min(100, 20 * pages), status: filter } }), [id, filter, pages], {
    pollMs: 5000,
    shouldPoll: (page) => page.data.some((d) => d.status === "pending" || d.status === "sending"),
  });
  const form = useForm({ url: "", description: "", status: "active", all: true, events: [] });
  const [notice, setNotice] = useState(null);
  const [test, setTest] = useState({ busy: false, result: null, error: null });

  useEffect(() => {
    const w = webhook.data;
    if (w) form.reset({ url: w.url, description: w.description ?? "", status: w.status === "inactive" ? "inactive" : "active", all: w.events.includes("*"), events: w.events.filter((e) => e !== "*") });
  }, [webhook.data]);

  if (webhook.error) return html`<${PageHeader} title="Webhook" /><${ErrorNotice} error=${webhook.error} what="The webhook could not be loaded" />`;
  if (!webhook.data) return html`<${PageHeader} title="Webhook" /><${Loading} />`;
  const w = webhook.data;

  const save = async (event) => {
    event.preventDefault();
    setNotice(null);
    const body = {};
    if (form.values.url.trim() !== w.url) body.url = form.values.url.trim();
    const events = eventsFromChoice(form.values);
    if (JSON.stringify(events) !== JSON.stringify(w.events)) body.events = events;
    const description = form.values.description.trim() === "" ? null : form.values.description.trim();
    if (description !== w.description) body.description = description;
    // A failing webhook is set active again only when asked: saving other fields leaves its status.
    if (form.values.status !== (w.status === "inactive" ? "inactive" : "active")) body.status = form.values.status;
    const saved = await form.submit(() => api("PATCH", `/v1/webhooks/${id}`, { body }), {}, event.currentTarget);
    if (saved) {
      webhook.setData(saved);
      setNotice(Object.keys(body).length ? "Saved." : "Nothing changed.");
    }
  };
  const sendTest = async () => {
    setTest({ busy: true, result: null, error: null });
    try {
      setTest({ busy: false, result: await api("POST", `/v1/webhooks/${id}/test`), error: null });
      void deliveries.reload();
      void webhook.reload();
    } catch (error) {
      setTest({ busy: false, result: null, error });
    }
  };
  const remove = async () => {
    if (!confirm(`Delete the webhook to ${w.url}? This cannot be undone.`)) return;
    try {
      await api("DELETE", `/v1/webhooks/${id}`);
      navigate("/webhooks");
    } catch (error) {
      setTest({ busy: false, result: null, error });
    }
  };
  const testAttempt = test.result?.attempts.at(-1);

  return html`
    <${PageHeader} title="Webhook" subtitle=${html`<span class="mono">${w.url}</span>`}>
      <button type="button" onClick=${sendTest} disabled=${test.busy}>${test.busy ? "Sending…" : "Send test event"}</button>
      <a class="button secondary" href=${`${BASE}/webhooks`}>All webhooks</a>
    <//>
    ${test.result ? html`<${Notice} kind=${test.result.status === "delivered" ? "ok" : "warn"}>Test delivery ${test.result.status}${testAttempt ? `: HTTP ${testAttempt.status_code ?? "none"}${testAttempt.error ? ` (${testAttempt.error})` : ""} in ${testAttempt.duration_ms} ms` : ""}.<//>` : null}
    <${ErrorNotice} error=${test.error} />
    <div class="with-side">
      <section class="card" aria-labelledby="deliveries-title">
        <div class="section-head">
          <h2 id="deliveries-title">Deliveries</h2>
          <div class="field field-compact">
            <label for="delivery-status">Status</label>
            <select id="delivery-status" value=${filter} onChange=${(e) => { setFilter(e.currentTarget.value); setPages(1); }}>
              <option value="">any</option>
              ${DELIVERY_STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
            </select>
          </div>
        </div>
        <${ErrorNotice} error=${deliveries.error} what="Deliveries could not be loaded" />
        ${deliveries.data === undefined && !deliveries.error ? html`<${Loading} />` : null}
        ${deliveries.data && deliveries.data.data.length === 0 ? html`<p class="empty">No deliveries${filter ? ` ${filter}` : ""}.</p>` : null}
        ${deliveries.data?.data.length
          ? html`
              <div class="table-wrap">
                <table class="list">
                  <caption class="visually-hidden">Deliveries, newest first</caption>
                  <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                  <tbody>${deliveries.data.data.map((d) => html`<${Delivery} key=${d.id} webhookId=${id} delivery=${d} onChanged=${() => deliveries.reload()} />`)}</tbody>
                </table>
              </div>
            `
          : null}
        <${LoadMore} page=${deliveries.data} onMore=${() => setPages(pages + 1)} busy=${deliveries.loading} />
      </section>
      <form class="card side" onSubmit=${save} novalidate aria-labelledby="webhook-settings">
        <h2 id="webhook-settings">Settings</h2>
        <p>Status: <${StatusBadge} status=${w.status} /></p>
        ${notice ? html`<${Notice} kind="ok">${notice}<//>` : null}
        <${FormError} error=${form.error} fields=${FIELDS} />
        <${TextField} form=${form} name="url" id="webhook-edit-url" label="URL" type="url" />
        <${EventChoice} form=${form} idPrefix="webhook-edit" />
        <${TextField} form=${form} name="description" id="webhook-edit-description" label="Description" />
        <${SelectField} form=${form} name="status" id="webhook-edit-status" label="Status" options=${["active", "inactive"]} hint="Active again resets the failure count." />
        <div class="form-actions">
          <button type="submit" disabled=${form.busy}>Save</button>
          <button type="button" class="danger" onClick=${remove}>Delete</button>
        </div>
      </form>
    </div>
  `;
}
