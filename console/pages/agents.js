// Agents: the list, a search, and from each agent its form or a browser call ("Talk").
import { useState } from "preact/hooks";
import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { ErrorNotice, Loading, LoadMore, StatusBadge } from "../components/feedback.js";
import { api } from "../lib/api.js";
import { BASE, currentQuery, navigate, setQuery } from "../lib/router.js";
import { formatDateTime } from "../lib/format.js";
import { useResource } from "../lib/use-resource.js";

export function AgentsPage() {
  const initial = currentQuery();
  const [search, setSearch] = useState(initial.get("search") ?? "");
  const [status, setStatus] = useState(initial.get("status") ?? "");
  const [applied, setApplied] = useState({ search: initial.get("search") ?? "", status: initial.get("status") ?? "" });
  const [extra, setExtra] = useState({ items: [], page: null, busy: false });

  const list = useResource(async () => {
    setExtra({ items: [], page: null, busy: false });
    return api("GET", "/v1/agents", { query: { limit: 25, search: applied.search, status: applied.status } });
  }, [applied.search, applied.status]);

  const apply = (event) => {
    event.preventDefault();
    setQuery({ search, status });
    setApplied({ search, status });
  };
  const more = async () => {
    const page = extra.page ?? list.data;
    setExtra((e) => ({ ...e, busy: true }));
    const next = await api("GET", "/v1/agents", { query: { limit: 25, search: applied.search, status: applied.status, cursor: page.next_cursor } });
    setExtra((e) => ({ items: [...e.items, ...next.data], page: next, busy: false }));
  };
  const agents = [...(list.data?.data ?? []), ...extra.items];

  return html`
    <${PageHeader} title="Agents" subtitle=${list.data ? `${list.data.total} agent${list.data.total === 1 ? "" : "s"}` : null}>
      <a class="button" href=${`${BASE}/agents/new`}>New agent</a>
    <//>
    <form class="filters" onSubmit=${apply} role="search" aria-label="Filter agents">
      <div class="field">
        <label for="agent-search">Name contains</label>
        <input id="agent-search" type="search" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="agent-status-filter">Status</label>
        <select id="agent-status-filter" value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
          <option value="">any</option>
          <option value="active">active</option>
          <option value="inactive">inactive</option>
        </select>
      </div>
      <button type="submit" class="secondary">Filter</button>
    </form>
    <${ErrorNotice} error=${list.error} what="Agents could not be loaded" />
    ${list.data === undefined && !list.error ? html`<${Loading} />` : null}
    ${list.data && agents.length === 0 ? html`<p class="empty">No agents yet. <a href=${`${BASE}/agents/new`}>Create one</a>.</p>` : null}
    ${agents.length > 0
      ? html`
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">Agents</caption>
              <thead>
                <tr><th scope="col">Name</th><th scope="col">Voice</th><th scope="col">Model</th><th scope="col">Status</th><th scope="col">Updated</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
              </thead>
              <tbody>
                ${agents.map(
                  (agent) => html`
                    <tr>
                      <td data-label="Name"><a href=${`${BASE}/agents/${agent.id}`}>${agent.name}</a><div class="muted small mono">${agent.id}</div></td>
                      <td data-label="Voice">${agent.voice_id}<div class="muted small">${agent.language}</div></td>
                      <td data-label="Model">${agent.model}</td>
                      <td data-label="Status"><${StatusBadge} status=${agent.status} /></td>
                      <td data-label="Updated">${formatDateTime(agent.updated_at, true)}</td>
                      <td class="actions-cell"><div class="row-actions">
                        <button
                          type="button"
                          disabled=${agent.status !== "active"}
                          title=${agent.status !== "active" ? "Inactive agents take no calls" : undefined}
                          aria-label=${`Talk to ${agent.name}`}
                          onClick=${() => navigate(`/agents/${agent.id}/talk`, { state: { autostart: true } })}
                        >Talk</button>
                        <a class="button secondary" href=${`${BASE}/agents/${agent.id}`} aria-label=${`Edit ${agent.name}`}>Edit</a>
                      </div></td>
                    </tr>
                  `,
                )}
              </tbody>
            </table>
          </div>
        `
      : null}
    <${LoadMore} page=${extra.page ?? list.data} onMore=${more} busy=${extra.busy} />
  `;
}
