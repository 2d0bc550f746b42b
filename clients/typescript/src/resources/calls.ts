/**
 * Calls: `POST /v1/calls` (start an outbound call, answered 200 with the call `queued`),
 * `GET /v1/calls`, `GET /v1/calls/{id}`, and `POST /v1/calls/{id}/end` (hang up).
 */
import type { ListFilters, ListItem, QueryParams, RequestBody, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type Call = ResponseBody<"getCall">;
export type CallListItem = ListItem<"listCalls">;
export type CreateCallBody = RequestBody<"createCall">;
export type CreatedCall = ResponseBody<"createCall">;
export type CallListFilters = ListFilters<"listCalls">;

export function callsResource(api: ParleyApi) {
  return {
    /** Starts an outbound call; it is created `queued` and dialled when a slot is free. */
    create: (body: CreateCallBody, options?: RequestOptions) => unwrap(api.POST("/v1/calls", { body, ...fetchOptions(options) })),
    /** Reads a call; `include: "transcript,recording,analysis"` adds those. */
    get: (callId: string, query?: QueryParams<"getCall">, options?: RequestOptions) =>
      unwrap(api.GET("/v1/calls/{call_id}", { params: { path: { call_id: callId }, ...(query ? { query } : {}) }, ...fetchOptions(options) })),
    /** Every call matching `filters` (`status`, `agent_id`, `from_date`, ...), following cursors. */
    list: (filters?: CallListFilters, options?: RequestOptions) =>
      new PaginatedList<CallListItem>((cursor) => unwrap(api.GET("/v1/calls", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) }))),
    /** Ends a call now (`POST /v1/calls/{id}/end`); 409 `call_already_ended` once it has ended. */
    hangUp: (callId: string, options?: RequestOptions) => unwrap(api.POST("/v1/calls/{call_id}/end", { params: { path: { call_id: callId } }, ...fetchOptions(options) })),
    /** Removes what was said on an ended call (recording, transcript, analysis) for a privacy request; the billing record stays. */
    deleteContent: (callId: string, options?: RequestOptions) => unwrap(api.DELETE("/v1/calls/{call_id}", { params: { path: { call_id: callId } }, ...fetchOptions(options) })),
  };
}

export type CallsResource = ReturnType<typeof callsResource>;
