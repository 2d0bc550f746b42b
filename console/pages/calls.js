// Calls: a filterable list (status, direction, agent, outcome, dates), refreshed every few seconds.
import { useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { FormError, SelectField, TextField, useForm } from "../components/form.js";
import { ErrorNotice, Loading, LoadMore, StatusBadge } from "../components/feedback.js";
import { api, listAll } from "../lib/api.js";
import { CALL_DIRECTIONS, CALL_OUTCOMES, CALL_STATUSES } from "../lib/api-values.js";
import { formatDateTime, formatDuration, label } from "../lib/format.js";
import { BASE, currentQuery, setQuery } from "../lib/router.js";
import { useResource } from "../lib/use-resource.js";

const POLL_MS = 4000;
const FILTERS = ["status", "direction", "agent_id", "outcome", "from_date", "to_date"];

/** A day in the browser's zone as the API's ISO date-time; `to` is inclusive here, exclusive in the API. */
function dayBoundary(day, next) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day;
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d + (next ? 1 : 0)).toISOString();
}

export function CallsPage() {
  const query = currentQuery();
  const initial = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ""]));
  const filters = useForm(initial);
  const [applied, setApplied] = useState(initial);
  const [shown, setShown] = useState(25);
  const agents = useResource(() => listAll("/v1/agents", {}, 300), []);
  const agentName = Object.fromEntries((agents.data ?? []).map((a) => [a.id, a.name]));

  const list = useResource(
    () =>
      filters.submit(() =>
        api("GET", "/v1/calls", {
          query: {
            limit: shown,
            status: applied.status,
            direction: applied.direction,
            agent_id: applied.agent_id,
            outcome: applied.outcome,
            from_date: applied.from_date ? dayBoundary(applied.from_date, false) : undefined,
            to_date: applied.to_date ? dayBoundary(applied.to_date, true) : undefined,
          },
        }),
      ),
    [JSON.stringify(applied), shown],
    { pollMs: POLL_MS },
  );

  const apply = (event) => {
    event.preventDefault();
    setQuery(filters.values);
    setShown(25);
    setApplied({ ...filters.values });
  };
  const clear = () => {
    const empty = Object.fromEntries(FILTERS.map((f) => [f, ""]));
    filters.reset(empty);
    setQuery({});
    setApplied(empty);
  };
  const calls = list.data?.data ?? [];

  return html`
    <${PageHeader}
      title="Calls"
      subtitle=${list.data ? `${list.data.total} call${list.data.total === 1 ? "" : "s"} · refreshed every ${POLL_MS / 1000} s${list.updatedAt ? `, last at ${list.updatedAt.toLocaleTimeString()}` : ""}` : null}
    />
    <form class="filters card" onSubmit=${apply} role="search" aria-label="Filter calls" novalidate>
      <${SelectField} form=${filters} name="status" id="calls-status" label="Status" options=${[{ value: "", label: "any" }, ...CALL_STATUSES.map((s) => ({ value: s, label: label(s) }))]} />
      <${SelectField} form=${filters} name="direction" id="calls-direction" label="Direction" options=${[{ value: "", label: "any" }, ...CALL_DIRECTIONS]} />
      <${SelectField} form=${filters} name="agent_id" id="calls-agent" label="Agent" options=${[{ value: "", label: "any" }, ...(agents.data ?? []).map((a) => ({ value: a.id, label: a.name }))]} />
      <${SelectField} form=${filters} name="outcome" id="calls-outcome" label="Outcome" options=${[{ value: "", label: "any" }, ...CALL_OUTCOMES.map((o) => ({ value: o, label: label(o) }))]} />
      <${TextField} form=${filters} name="from_date" id="calls-from" label="From (day)" type="date" />
      <${TextField} form=${filters} name="to_date" id="calls-to" label="To (day, included)" type="date" />
      <div class="filter-actions">
        <button type="submit">Apply</button>
        <button type="button" class="secondary" onClick=${clear}>Clear</button>
      </div>
    </form>
    <${FormError} error=${filters.error} fields=${FILTERS} />
    ${list.data === undefined && !filters.error ? html`<${Loading} />` : null}
    ${list.data && calls.length === 0 ? html`<p class="empty">No calls match.</p>` : null}
    ${calls.length > 0
      ? html`
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">Calls, newest first</caption>
              <thead>
                <tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Direction</th><th scope="col">Agent</th><th scope="col">Number</th><th scope="col">Duration</th></tr>
              </thead>
              <tbody>
                ${calls.map(
                  (call) => html`
                    <tr>
                      <td data-label="Started"><a href=${`${BASE}/calls/${call.id}`}>${formatDateTime(call.created_at, true)}</a><div class="muted small mono">${call.id}</div></td>
                      <td data-label="Status"><${StatusBadge} status=${call.status} /></td>
                      <td data-label="Direction">${call.direction}</td>
                      <td data-label="Agent">${agentName[call.agent_id] ? html`<a href=${`${BASE}/agents/${call.agent_id}`}>${agentName[call.agent_id]}</a>` : html`<span class="mono small">${call.agent_id}</span>`}</td>
                      <td data-label="Number">${call.phone_number ?? "–"}${call.from_number ? html`<div class="muted small">from ${call.from_number}</div>` : null}</td>
                      <td data-label="Duration">${formatDuration(call.duration)}</td>
                    </tr>
                  `,
                )}
              </tbody>
            </table>
          </div>
        `
      : null}
    <${LoadMore} page=${list.data} onMore=${() => setShown(Math.min(100, shown + 25))} busy=${list.loading} />
    ${list.data?.has_more && shown >= 100 ? html`<p class="muted small">Showing the newest 100; narrow the filters to see older calls.</p>` : null}
  `;
}
