import type { Services } from "../../services/container.js";
import type { DoNotCallRecord } from "../../db/repositories/do-not-call.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { addDoNotCallBody, doNotCallDeletedSchema, doNotCallEntrySchema, doNotCallListSchema, doNotCallNumberParam, listDoNotCallQuery } from "../schemas/do-not-call.js";

function present(entry: DoNotCallRecord) {
  return { id: entry.id, phone_number: entry.phone_number, source: entry.source, call_id: entry.call_id, created_at: entry.created_at };
}

export function doNotCallRoutes({ doNotCall }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/do-not-call",
      operationId: "listDoNotCall",
      summary: "List the account's do-not-call numbers (newest first by default)",
      tag: "Do not call",
      permission: "calls:read",
      query: listDoNotCallQuery,
      response: doNotCallListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor"],
      handler: async ({ auth, query }) => {
        const result = await doNotCall.list(auth.account.id, query);
        return { ...result, data: result.data.map(present) };
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/do-not-call",
      operationId: "addDoNotCall",
      summary: "Add a number to the do-not-call list (201; 200 with the existing entry when it is listed already)",
      tag: "Do not call",
      permission: "calls:write",
      body: addDoNotCallBody,
      response: doNotCallEntrySchema,
      status: 201,
      alsoStatus: { status: 200, description: "The number was listed already: its existing entry" },
      errors: ["invalid_request", "do_not_call_limit_reached"],
      handler: async ({ auth, body, res }) => {
        const { entry, added } = await doNotCall.add(auth.account.id, body.phone_number);
        if (!added) res.locals.status = 200;
        return present(entry);
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/do-not-call/:phone_number",
      operationId: "getDoNotCall",
      summary: "Whether a number is on the list: its entry, or 404",
      tag: "Do not call",
      permission: "calls:read",
      params: doNotCallNumberParam,
      response: doNotCallEntrySchema,
      status: 200,
      errors: ["invalid_request", "do_not_call_entry_not_found"],
      handler: async ({ auth, params }) => present(await doNotCall.get(auth.account.id, params.phone_number)),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/do-not-call/:phone_number",
      operationId: "removeDoNotCall",
      summary: "Remove a number from the do-not-call list (the number URL-encoded: %2B14155550123)",
      tag: "Do not call",
      permission: "calls:write",
      params: doNotCallNumberParam,
      response: doNotCallDeletedSchema,
      status: 200,
      errors: ["invalid_request", "do_not_call_entry_not_found"],
      handler: async ({ auth, params }) => {
        await doNotCall.remove(auth.account.id, params.phone_number);
        return { phone_number: params.phone_number, deleted: true };
      },
    }),
  ];
}
