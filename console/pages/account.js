// Account: plan, credits and the ledger, limits and usage, what this key may do, the media
// token (for /media/twilio) and the signing secret (for per-call webhook_url deliveries).
import { useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { ErrorNotice, Loading, LoadMore, Notice } from "../components/feedback.js";
import { api } from "../lib/api.js";
import { keyGrants } from "../lib/key-permissions.js";
import { PERMISSIONS } from "../lib/api-values.js";
import { formatDateTime, formatNumber, label } from "../lib/format.js";
import { BASE } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

/** Each permission a key can hold, and whether this one holds it. */
async function keyPermissions() {
  const grants = await keyGrants();
  return PERMISSIONS.map((permission) => ({ permission, granted: grants(permission) }));
}

/** What the key may do: shown even when it cannot read the account. */
function Permissions({ permissions }) {
  return html`
    <section class="card" aria-labelledby="key-title">
      <h2 id="key-title">This key's permissions</h2>
      <p class="muted small">Found by trying each with a request that changes nothing (the API has no endpoint that lists them).</p>
      <${ErrorNotice} error=${permissions.error} />
      ${permissions.data
        ? html`<ul class="permissions">
            ${permissions.data.map(
              (p) => html`<li class=${p.granted ? "granted" : "denied"} data-permission=${p.permission}><span aria-hidden="true">${p.granted ? "✓" : "✗"}</span> <code>${p.permission}</code><span class="visually-hidden">${p.granted ? " granted" : " not granted"}</span></li>`,
            )}
          </ul>`
        : html`<${Loading} />`}
    </section>
  `;
}

function Ledger() {
  const [extra, setExtra] = useState({ items: [], page: null, busy: false });
  const ledger = useResource(() => api("GET", "/v1/account/ledger", { query: { limit: 20 } }), []);
  const more = async () => {
    setExtra((e) => ({ ...e, busy: true }));
    const next = await api("GET", "/v1/account/ledger", { query: { limit: 20, cursor: (extra.page ?? ledger.data).next_cursor } });
    setExtra((e) => ({ items: [...e.items, ...next.data], page: next, busy: false }));
  };
  const rows = [...(ledger.data?.data ?? []), ...extra.items];
  return html`
    <section class="card" aria-labelledby="ledger-title">
      <h2 id="ledger-title">Credit ledger</h2>
      <${ErrorNotice} error=${ledger.error} what="The ledger could not be loaded" />
      ${ledger.data === undefined && !ledger.error ? html`<${Loading} />` : null}
      ${ledger.data && rows.length === 0 ? html`<p class="empty">No credit movements.</p>` : null}
      ${rows.length
        ? html`
            <div class="table-wrap">
              <table class="list">
                <caption class="visually-hidden">Credit movements, newest first</caption>
                <thead><tr><th scope="col">When</th><th scope="col">Reason</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Balance</th><th scope="col">Description</th></tr></thead>
                <tbody>
                  ${rows.map(
                    (e) => html`<tr>
                      <td data-label="When">${formatDateTime(e.created_at, true)}</td>
                      <td data-label="Reason">${e.reason}${e.call_id ? html` <a href=${`${BASE}/calls/${e.call_id}`}>call</a>` : null}</td>
                      <td data-label="Amount" class=${`num ${e.amount < 0 ? "negative" : "positive"}`}>${e.amount > 0 ? "+" : ""}${formatNumber(e.amount)}</td>
                      <td data-label="Balance" class="num">${formatNumber(e.balance_after)}</td>
                      <td data-label="Description">${e.description ?? ""}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
          `
        : null}
      <${LoadMore} page=${extra.page ?? ledger.data} onMore=${more} busy=${extra.busy} />
    </section>
  `;
}

export function AccountPage() {
  const account = useResource(() => api("GET", "/v1/account"), []);
  const permissions = useResource(keyPermissions, []);
  const [token, setToken] = useState({ busy: false, value: null, error: null });
  const [showSecret, setShowSecret] = useState(false);

  const rotate = async () => {
    if (!confirm("Make a new media token? The current one stops working at once: Twilio streams that use it are refused until you put the new one in your TwiML.")) return;
    setToken({ busy: true, value: null, error: null });
    try {
      const rotated = await api("POST", "/v1/account/media-token/rotate");
      setToken({ busy: false, value: rotated.media_token, error: null });
      void account.reload();
    } catch (error) {
      setToken({ busy: false, value: null, error });
    }
  };

  const a = account.data;
  return html`
    <${PageHeader} title="Account" subtitle=${a ? html`${a.name} · <span class="mono">${a.id}</span>` : null} />
    <${ErrorNotice} error=${account.error} what="The account could not be loaded" />
    ${account.error ? html`<div class="grid-2"><${Permissions} permissions=${permissions} /></div>` : null}
    ${a === undefined && !account.error ? html`<${Loading} />` : null}
    ${a
      ? html`
          <div class="grid-2">
            <section class="card" aria-labelledby="plan-title">
              <h2 id="plan-title">Plan and credits</h2>
              <p class="big-number"><span class="visually-hidden">Credit balance: </span>${formatNumber(a.credit_balance)} <span class="muted">credits</span></p>
              <dl class="pairs">
                <div><dt>Plan</dt><dd>${a.plan}</dd></div>
                <div><dt>Requests per minute</dt><dd>${formatNumber(a.limits.requests_per_minute)}</dd></div>
                <div><dt>Since</dt><dd>${formatDateTime(a.created_at)}</dd></div>
              </dl>
              <table class="numbers">
                <caption>Usage and limits</caption>
                <thead><tr><th scope="col">What</th><th scope="col" class="num">In use</th><th scope="col" class="num">Limit</th></tr></thead>
                <tbody>
                  ${["agents", "webhooks", "concurrent_calls", "queued_calls"].map(
                    (k) => html`<tr><th scope="row">${label(k)}</th><td class="num">${formatNumber(a.usage[k])}</td><td class="num">${formatNumber(a.limits[k])}</td></tr>`,
                  )}
                </tbody>
              </table>
            </section>
            <${Permissions} permissions=${permissions} />
          </div>
          <div class="grid-2">
            <section class="card" aria-labelledby="token-title">
              <h2 id="token-title">Media token</h2>
              <p>It authenticates Twilio Media Streams (<code>/media/twilio</code>) for this account. ${a.media_token_set ? `Made ${formatDateTime(a.media_token_created_at)}.` : "None yet."}</p>
              ${token.value
                ? html`<${Notice} kind="warn"><p>The new token, shown this once:</p><p><code class="secret" id="media-token">${token.value}</code></p><//>`
                : null}
              <${ErrorNotice} error=${token.error} what="No new token" />
              <button type="button" onClick=${rotate} disabled=${token.busy}>${a.media_token_set ? "Rotate the media token" : "Make a media token"}</button>
            </section>
            <section class="card" aria-labelledby="secret-title">
              <h2 id="secret-title">Signing secret</h2>
              <p class="small">Signs deliveries to a call's own <code>webhook_url</code>.</p>
              ${a.signing_secret
                ? html`<p><code class="secret">${showSecret ? a.signing_secret : "•".repeat(24)}</code> <button type="button" class="secondary" aria-pressed=${showSecret ? "true" : "false"} onClick=${() => setShowSecret(!showSecret)}>${showSecret ? "Hide" : "Show"}</button></p>`
                : html`<p class="muted">Shown only to keys that hold <code>webhooks:write</code>.</p>`}
            </section>
          </div>
        `
      : null}
    <${Ledger} />
  `;
}
