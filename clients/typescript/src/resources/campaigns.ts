/**
 * Campaigns: `POST /v1/campaigns` (bulk calls), `GET`, the contacts list, the results CSV,
 * and `pause` / `resume` / `cancel`.
 */
import type { ListFilters, ListItem, QueryParams, RequestBody, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type Campaign = ResponseBody<"getCampaign">;
export type CampaignListItem = ListItem<"listCampaigns">;
export type CampaignContact = ListItem<"listCampaignContacts">;
export type CreateCampaignBody = RequestBody<"createCampaign">;
export type CampaignListFilters = ListFilters<"listCampaigns">;
export type CampaignContactListFilters = ListFilters<"listCampaignContacts">;

export function campaignsResource(api: ParleyApi) {
  const campaignPath = (campaignId: string) => ({ campaign_id: campaignId });
  return {
    /** Creates (and schedules) a campaign (201). */
    create: (body: CreateCampaignBody, options?: RequestOptions) => unwrap(api.POST("/v1/campaigns", { body, ...fetchOptions(options) })),
    /** Reads a campaign; `include: "contacts"` adds them. */
    get: (campaignId: string, query?: QueryParams<"getCampaign">, options?: RequestOptions) =>
      unwrap(api.GET("/v1/campaigns/{campaign_id}", { params: { path: campaignPath(campaignId), ...(query ? { query } : {}) }, ...fetchOptions(options) })),
    /** Every campaign matching `filters` (`status`), following cursors. */
    list: (filters?: CampaignListFilters, options?: RequestOptions) =>
      new PaginatedList<CampaignListItem>((cursor) => unwrap(api.GET("/v1/campaigns", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) }))),
    /** A campaign's contacts (`status` filter), following cursors. */
    contacts: (campaignId: string, filters?: CampaignContactListFilters, options?: RequestOptions) =>
      new PaginatedList<CampaignContact>((cursor) =>
        unwrap(api.GET("/v1/campaigns/{campaign_id}/contacts", { params: { path: campaignPath(campaignId), query: listQuery(filters, cursor) }, ...fetchOptions(options) })),
      ),
    /** The results as CSV text (one row per contact). */
    results: (campaignId: string, options?: RequestOptions) =>
      unwrap(api.GET("/v1/campaigns/{campaign_id}/results.csv", { params: { path: campaignPath(campaignId) }, parseAs: "text", ...fetchOptions(options) })),
    pause: (campaignId: string, options?: RequestOptions) => unwrap(api.POST("/v1/campaigns/{campaign_id}/pause", { params: { path: campaignPath(campaignId) }, ...fetchOptions(options) })),
    resume: (campaignId: string, options?: RequestOptions) => unwrap(api.POST("/v1/campaigns/{campaign_id}/resume", { params: { path: campaignPath(campaignId) }, ...fetchOptions(options) })),
    cancel: (campaignId: string, options?: RequestOptions) => unwrap(api.POST("/v1/campaigns/{campaign_id}/cancel", { params: { path: campaignPath(campaignId) }, ...fetchOptions(options) })),
  };
}

export type CampaignsResource = ReturnType<typeof campaignsResource>;
