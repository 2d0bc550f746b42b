/**
 * The caller's account (`GET /v1/account`: plan, credits, limits, usage, signing secret), its
 * credit ledger (`GET /v1/account/ledger`) and the key in use (`GET /v1/account/key`).
 */
import type { ListFilters, ListItem, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type Account = ResponseBody<"getAccount">;
export type LedgerEntry = ListItem<"listLedger">;
export type CallerKey = ResponseBody<"getCallerKey">;
export type LedgerListFilters = ListFilters<"listLedger">;

export function accountResource(api: ParleyApi) {
  return {
    get: (options?: RequestOptions) => unwrap(api.GET("/v1/account", { ...fetchOptions(options) })),
    /** The key this client uses: its name and permissions (any valid key may ask). */
    key: (options?: RequestOptions) => unwrap(api.GET("/v1/account/key", { ...fetchOptions(options) })),
    /** The account's credit movements, following cursors. */
    ledger: (filters?: LedgerListFilters, options?: RequestOptions) =>
      new PaginatedList<LedgerEntry>((cursor) => unwrap(api.GET("/v1/account/ledger", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) }))),
  };
}

export type AccountResource = ReturnType<typeof accountResource>;
