import type { Services } from "../../services/container.js";
import { presentCallListItem } from "../presenters/call.js";
import { presentPhoneNumber } from "../presenters/phone-number.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { deletedSchema, idParam } from "../schemas/common.js";
import {
  createPhoneNumberBody,
  getPhoneNumberQuery,
  listPhoneNumbersQuery,
  phoneNumberListSchema,
  phoneNumberReadSchema,
  phoneNumberSchema,
  updatePhoneNumberBody,
} from "../schemas/phone-numbers.js";

const phoneNumberIdParam = idParam("phone_number_id");

export function phoneNumberRoutes({ phoneNumbers, config }: Services): RouteSpec[] {
  // A number that records no carrier is shown with the service's default.
  const present = (number: Parameters<typeof presentPhoneNumber>[0]) => presentPhoneNumber(number, config.carrier);
  return [
    defineRoute({
      method: "post",
      path: "/v1/phone-numbers",
      operationId: "createPhoneNumber",
      summary: "Register a number the account holds at its carrier: it stays pending until the operator approves it",
      tag: "Phone numbers",
      permission: "numbers:write",
      body: createPhoneNumberBody,
      response: phoneNumberSchema,
      status: 201,
      errors: ["invalid_request", "invalid_phone_number", "invalid_country", "agent_not_found", "unauthorized", "phone_number_in_use"],
      handler: async ({ auth, body }) => present(await phoneNumbers.create(auth.account.id, body)),
    }),
    defineRoute({
      method: "get",
      path: "/v1/phone-numbers",
      operationId: "listPhoneNumbers",
      summary: "List phone numbers",
      tag: "Phone numbers",
      permission: "numbers:read",
      query: listPhoneNumbersQuery,
      response: phoneNumberListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "invalid_status", "invalid_country"],
      handler: async ({ auth, query }) => {
        const { status, country, ...page } = query;
        return phoneNumbers.list(auth.account.id, { status, country }, page, config.carrier);
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/phone-numbers/:phone_number_id",
      operationId: "getPhoneNumber",
      summary: "Read a phone number",
      tag: "Phone numbers",
      permission: "numbers:read",
      params: phoneNumberIdParam,
      query: getPhoneNumberQuery,
      response: phoneNumberReadSchema,
      status: 200,
      errors: ["phone_number_not_found", "unauthorized", "invalid_request"],
      handler: async ({ auth, params, query }) => {
        const number = await phoneNumbers.get(auth.account.id, params.phone_number_id);
        return {
          ...present(number),
          ...(query.include.has("stats") ? { stats: await phoneNumbers.stats(auth.account.id, number) } : {}),
          ...(query.include.has("recent_calls")
            ? { recent_calls: (await phoneNumbers.recentCalls(auth.account.id, number)).map(presentCallListItem) }
            : {}),
        };
      },
    }),
    defineRoute({
      method: "patch",
      path: "/v1/phone-numbers/:phone_number_id",
      operationId: "updatePhoneNumber",
      summary:
        "Update a phone number: default agent, friendly name, status (only the given fields change; `active` only brings back a released number the operator approved)",
      tag: "Phone numbers",
      permission: "numbers:write",
      params: phoneNumberIdParam,
      body: updatePhoneNumberBody,
      response: phoneNumberSchema,
      status: 200,
      errors: ["phone_number_not_found", "unauthorized", "invalid_request", "invalid_status", "agent_not_found", "phone_number_not_approved", "phone_number_in_use"],
      handler: async ({ auth, params, body }) => present(await phoneNumbers.update(auth.account.id, params.phone_number_id, body)),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/phone-numbers/:phone_number_id",
      operationId: "releasePhoneNumber",
      summary: "Release a phone number (it becomes inactive; the record stays)",
      tag: "Phone numbers",
      permission: "numbers:write",
      params: phoneNumberIdParam,
      // {id, deleted: true} like every other DELETE; a GET afterwards shows the `inactive` record.
      response: deletedSchema,
      status: 200,
      errors: ["phone_number_not_found", "unauthorized"],
      handler: async ({ auth, params }) => {
        await phoneNumbers.release(auth.account.id, params.phone_number_id);
        return { id: params.phone_number_id, deleted: true };
      },
    }),
  ];
}
