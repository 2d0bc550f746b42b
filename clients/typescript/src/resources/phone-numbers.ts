/**
 * Phone numbers: `POST /v1/phone-numbers` registers a number the account owns at its carrier
 * (it stays `pending` until the operator approves it), `GET`, `PATCH` (`default_agent_id`,
 * `friendly_name`, `status`) and `DELETE` (release: the number becomes `inactive`).
 */
import type { ListFilters, ListItem, QueryParams, RequestBody, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type PhoneNumber = ResponseBody<"getPhoneNumber">;
export type PhoneNumberListItem = ListItem<"listPhoneNumbers">;
export type CreatePhoneNumberBody = RequestBody<"createPhoneNumber">;
export type UpdatePhoneNumberBody = RequestBody<"updatePhoneNumber">;
export type PhoneNumberListFilters = ListFilters<"listPhoneNumbers">;

export function phoneNumbersResource(api: ParleyApi) {
  return {
    /** Registers a number (201, `pending` until approved). */
    create: (body: CreatePhoneNumberBody, options?: RequestOptions) => unwrap(api.POST("/v1/phone-numbers", { body, ...fetchOptions(options) })),
    /** Reads a number; `include: "stats,recent_calls"` adds those. */
    get: (phoneNumberId: string, query?: QueryParams<"getPhoneNumber">, options?: RequestOptions) =>
      unwrap(
        api.GET("/v1/phone-numbers/{phone_number_id}", { params: { path: { phone_number_id: phoneNumberId }, ...(query ? { query } : {}) }, ...fetchOptions(options) }),
      ),
    /** Every number matching `filters` (`status`, `country`), following cursors. */
    list: (filters?: PhoneNumberListFilters, options?: RequestOptions) =>
      new PaginatedList<PhoneNumberListItem>((cursor) =>
        unwrap(api.GET("/v1/phone-numbers", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) })),
      ),
    /** Changes the given fields only. */
    update: (phoneNumberId: string, body: UpdatePhoneNumberBody, options?: RequestOptions) =>
      unwrap(api.PATCH("/v1/phone-numbers/{phone_number_id}", { params: { path: { phone_number_id: phoneNumberId } }, body, ...fetchOptions(options) })),
    /** Releases a number (`DELETE`): it becomes `inactive`; the row is kept. */
    release: (phoneNumberId: string, options?: RequestOptions) =>
      unwrap(api.DELETE("/v1/phone-numbers/{phone_number_id}", { params: { path: { phone_number_id: phoneNumberId } }, ...fetchOptions(options) })),
  };
}

export type PhoneNumbersResource = ReturnType<typeof phoneNumbersResource>;
