/**
 * Agents: `POST/GET/PATCH/DELETE /v1/agents`. Each helper is one request (the list, one per
 * page as you iterate), answers the document's type and throws `ParleyApiError` otherwise.
 */
import type { ListFilters, ListItem, QueryParams, RequestBody, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type Agent = ResponseBody<"createAgent">;
/** An agent as `GET /v1/agents/{id}` answers it (with `stats` and `recent_calls` when included). */
export type AgentWithIncludes = ResponseBody<"getAgent">;
export type AgentListItem = ListItem<"listAgents">;
export type CreateAgentBody = RequestBody<"createAgent">;
export type UpdateAgentBody = RequestBody<"updateAgent">;
export type AgentListFilters = ListFilters<"listAgents">;

export function agentsResource(api: ParleyApi) {
  return {
    /** Creates an agent (201). */
    create: (body: CreateAgentBody, options?: RequestOptions) => unwrap(api.POST("/v1/agents", { body, ...fetchOptions(options) })),
    /** Reads an agent; `include: "stats,recent_calls"` adds those. */
    get: (agentId: string, query?: QueryParams<"getAgent">, options?: RequestOptions) =>
      unwrap(api.GET("/v1/agents/{agent_id}", { params: { path: { agent_id: agentId }, ...(query ? { query } : {}) }, ...fetchOptions(options) })),
    /** Every agent matching `filters` (`status`, `search`, `order`, `limit` per page), following cursors. */
    list: (filters?: AgentListFilters, options?: RequestOptions) =>
      new PaginatedList<AgentListItem>((cursor) => unwrap(api.GET("/v1/agents", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) }))),
    /** Changes the given fields only. */
    update: (agentId: string, body: UpdateAgentBody, options?: RequestOptions) =>
      unwrap(api.PATCH("/v1/agents/{agent_id}", { params: { path: { agent_id: agentId } }, body, ...fetchOptions(options) })),
    /** Deletes an agent (409 `agent_in_use` while it has active calls). */
    delete: (agentId: string, options?: RequestOptions) => unwrap(api.DELETE("/v1/agents/{agent_id}", { params: { path: { agent_id: agentId } }, ...fetchOptions(options) })),
  };
}

export type AgentsResource = ReturnType<typeof agentsResource>;
