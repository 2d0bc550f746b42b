/**
 * Events: `GET /v1/events` (the account's events, newest first: what webhooks deliver, to
 * catch up after downtime) and `GET /v1/events/{id}`.
 */
import type { ListFilters, ListItem, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type ParleyEvent = ResponseBody<"getEvent">;
export type ParleyEventListItem = ListItem<"listEvents">;
export type EventListFilters = ListFilters<"listEvents">;

export function eventsResource(api: ParleyApi) {
  return {
    get: (eventId: string, options?: RequestOptions) => unwrap(api.GET("/v1/events/{event_id}", { params: { path: { event_id: eventId } }, ...fetchOptions(options) })),
    /** Every event matching `filters` (`name`, `from_date`, `to_date`), following cursors. */
    list: (filters?: EventListFilters, options?: RequestOptions) =>
      new PaginatedList<ParleyEventListItem>((cursor) => unwrap(api.GET("/v1/events", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) }))),
  };
}

export type EventsResource = ReturnType<typeof eventsResource>;
