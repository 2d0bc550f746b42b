import type { Services } from "../../services/container.js";
import { presentEvent } from "../presenters/event.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { idParam } from "../schemas/common.js";
import { eventListSchema, eventSchema, listEventsQuery } from "../schemas/events.js";

export function eventRoutes({ eventLog }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/events",
      operationId: "listEvents",
      summary: "List the account's events (what webhooks deliver), to catch up after downtime; call content needs calls:read, appointment content appointments:read",
      tag: "Events",
      permission: "webhooks:read",
      query: listEventsQuery,
      response: eventListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor"],
      handler: async ({ auth, query }) => {
        const { name, call_id, from_date, to_date, ...page } = query;
        const result = await eventLog.list(auth.account.id, { name, callId: call_id, createdFrom: from_date, createdBefore: to_date }, page);
        return { ...result, data: result.data.map((event) => presentEvent(event, auth.permissions)) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/events/:event_id",
      operationId: "getEvent",
      summary: "Read one event",
      tag: "Events",
      permission: "webhooks:read",
      params: idParam("event_id"),
      response: eventSchema,
      status: 200,
      errors: ["event_not_found", "unauthorized"],
      handler: async ({ auth, params }) => presentEvent(await eventLog.get(auth.account.id, params.event_id), auth.permissions),
    }),
  ];
}
