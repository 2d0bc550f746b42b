// Webhooks: the list with each one's status, a test delivery, and a form to create one (its
// signing secret is shown once, here).
import { useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { FormError, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading, LoadMore, Notice, StatusBadge } from "../components/feedback.js";
import { EventChoice, eventsFromChoice } from "../components/event-choice.js";
import { api } from "../lib/api.js";
import { formatDateTime } from "../lib/format.js";
import { BASE } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

const FIELDS = ["url", "events", "description", "secret"];

function TestResult({ delivery }) {
  const attempt = delivery.attempts.at(-1);
  return html`<p role="status" class="small">Test: <${StatusBadge} status=${delivery.status} /> ${attempt ? `HTTP ${attempt.status_code ?? "none"}${attempt.error ? ` (${attempt.error})` : ""}, ${attempt.duration_ms} ms` : ""}</p>`;
}

function WebhookRow({ webhook, onChanged }) {
  const [state, setState] = useState({ busy: false, error: null, test: null });
  const run = async (action) => {
    setState({ busy: true, error: null, test: null });
    try {
      const result = await action();
      setState({ busy: false, error: null, test: result?.attempts ? result : null });
      onChanged();
    } catch (error) {
      setState({ busy: false, error, test: null });
    }
  };
  const toggle = webhook.status === "inactive" ? "active" : "inactive";
  return html`
    <tr>
      <td data-label="URL"><a href=${`${BASE}/webhooks/${webhook.id}`}>${webhook.url}</a><div class="muted small">${webhook.description ?? ""}</div></td>
      <td data-label="Events" class="small">${webhook.events.join(", ")}</td>
      <td data-label="Status"><${StatusBadge} status=${webhook.status} /></td>
      <td data-label="Created">${formatDateTime(webhook.created_at, true)}</td>
      <td class="actions-cell"><div class="row-actions">
        <button type="button" class="secondary" disabled=${state.busy} onClick=${() => run(() => api("POST", `/v1/webhooks/${webhook.id}/test`))}>Send test</button>
        <button type="button" class="secondary" disabled=${state.busy} onClick=${() => run(() => api("PATCH", `/v1/webhooks/${webhook.id}`, { body: { status: toggle } }))}>${toggle === "active" ? "Activate" : "Deactivate"}</button>
        <a class="button secondary" href=${`${BASE}/webhooks/${webhook.id}`}>Deliveries</a>
        </div>
        ${state.test ? html`<${TestResult} delivery=${state.test} />` : null}
        ${state.error ? html`<p class="field-error">${state.error.message} <code>${state.error.code}</code></p>` : null}
      </td>
    </tr>
  `;
}

export function WebhooksPage() {
  const [pages, setPages] = useState(1);
  const list = useResource(() => api("GET", "/v1/webhooks", { query: { limit: Math.min(100, 25 * pages) } }), [pages]);
  const form = useForm({ url: "", description: "", secret: "", all: true, events: [] });
  const [created, setCreated] = useState(null);

  const create = async (event) => {
    event.preventDefault();
    const body = { url: form.values.url.trim(), events: eventsFromChoice(form.values) };
    if (form.values.description.trim()) body.description = form.values.description.trim();
    if (form.values.secret) body.secret = form.values.secret;
    const webhook = await form.submit(() => api("POST", "/v1/webhooks", { body }), {}, event.currentTarget);
    if (webhook) {
      setCreated(webhook);
      form.reset({ url: "", description: "", secret: "", all: true, events: [] });
      void list.reload();
    }
  };

  return html`
    <${PageHeader} title="Webhooks" subtitle="Signed POSTs of the account's events to your endpoints." />
    <${ErrorNotice} error=${list.error} what="Webhooks could not be loaded" />
    ${list.data === undefined && !list.error ? html`<${Loading} />` : null}
    ${list.data && list.data.data.length === 0 ? html`<p class="empty">No webhooks yet.</p>` : null}
    ${list.data?.data.length
      ? html`
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">Webhooks</caption>
              <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>${list.data.data.map((webhook) => html`<${WebhookRow} key=${webhook.id} webhook=${webhook} onChanged=${() => list.reload()} />`)}</tbody>
            </table>
          </div>
        `
      : null}
    <${LoadMore} page=${list.data} onMore=${() => setPages(pages + 1)} busy=${list.loading} />
    <form class="card" onSubmit=${create} novalidate aria-labelledby="new-webhook">
      <h2 id="new-webhook">New webhook</h2>
      ${created
        ? html`<${Notice} kind="ok">
            <p>Webhook created. Its signing secret, shown this once (verify <code>X-Parley-Signature</code> with it):</p>
            <p><code class="secret" id="webhook-secret">${created.secret}</code></p>
          <//>`
        : null}
      <${FormError} error=${form.error} fields=${FIELDS} />
      <${TextField} form=${form} name="url" id="webhook-url" label="URL" type="url" placeholder="https://example.com/parley" hint="https only (http to loopback when the operator allows it); the server must accept a connection." />
      <${EventChoice} form=${form} idPrefix="webhook" />
      <div class="row">
        <${TextField} form=${form} name="description" id="webhook-description" label="Description" />
        <${TextField} form=${form} name="secret" id="webhook-secret-input" label="Secret" type="password" autocomplete="off" hint="16 to 256 characters; empty: one is generated." />
      </div>
      <button type="submit" disabled=${form.busy}>${form.busy ? "Checking the URL…" : "Create webhook"}</button>
    </form>
  `;
}
