import type { CampaignAction } from "../../services/campaigns.js";
import type { Services } from "../../services/container.js";
import { presentCampaign, presentCampaignContact, presentContactAttempt } from "../presenters/campaign.js";
import { grants } from "../../services/permissions.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { z } from "zod";
import {
  campaignListSchema,
  campaignReadSchema,
  campaignSchema,
  contactListSchema,
  createCampaignBody,
  getCampaignQuery,
  listCampaignsQuery,
  listContactsQuery,
} from "../schemas/campaigns.js";
import { idParam } from "../schemas/common.js";

const campaignIdParam = idParam("campaign_id");

const ACTION_SUMMARIES: Record<CampaignAction, string> = {
  pause: "Pause a scheduled or running campaign",
  resume: "Resume a paused campaign (it becomes scheduled again, and running at once or at its start time)",
  cancel: "Cancel a campaign; contacts not yet dialled or waiting for a retry are cancelled",
};

export function campaignRoutes({ campaigns }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/campaigns",
      operationId: "createCampaign",
      summary: "Create a campaign (scheduled; the runner starts dialling it at settings.schedule, or at once)",
      tag: "Campaigns",
      permission: "campaigns:write",
      body: createCampaignBody,
      response: campaignSchema,
      status: 201,
      errors: ["invalid_request", "invalid_phone_number", "invalid_date_format", "invalid_from_number", "agent_not_found", "agent_inactive"],
      handler: async ({ auth, body }) => presentCampaign(await campaigns.create(auth.account, body)),
    }),
    defineRoute({
      method: "get",
      path: "/v1/campaigns",
      operationId: "listCampaigns",
      summary: "List campaigns",
      tag: "Campaigns",
      permission: "campaigns:read",
      query: listCampaignsQuery,
      response: campaignListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "invalid_status"],
      handler: async ({ auth, query }) => {
        const { status, ...page } = query;
        const result = await campaigns.list(auth.account.id, { status }, page);
        return { ...result, data: result.data.map(presentCampaign) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/campaigns/:campaign_id",
      operationId: "getCampaign",
      summary: "Read a campaign (include=contacts lists its contacts)",
      tag: "Campaigns",
      permission: "campaigns:read",
      params: campaignIdParam,
      query: getCampaignQuery,
      response: campaignReadSchema,
      status: 200,
      errors: ["campaign_not_found", "unauthorized", "invalid_request"],
      handler: async ({ auth, params, query }) => {
        const campaign = await campaigns.get(auth.account.id, params.campaign_id);
        const presented = presentCampaign(campaign);
        if (!query.include.has("contacts")) return presented;
        const contacts = await campaigns.contactsOf(campaign);
        return { ...presented, contacts: { ...presented.contacts, data: contacts.map(presentCampaignContact) } };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/campaigns/:campaign_id/contacts",
      operationId: "listCampaignContacts",
      summary: "List a campaign's contacts in calling order, each with the calls made for it",
      tag: "Campaigns",
      permission: "campaigns:read",
      params: campaignIdParam,
      query: listContactsQuery,
      response: contactListSchema,
      status: 200,
      errors: ["campaign_not_found", "unauthorized", "invalid_request", "invalid_cursor"],
      handler: async ({ auth, params, query }) => {
        const { status, ...page } = query;
        const result = await campaigns.listContacts(auth.account.id, params.campaign_id, status, page);
        return { ...result, data: result.data.map(({ contact, calls }) => ({ ...presentCampaignContact(contact), calls: calls.map(presentContactAttempt) })) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/campaigns/:campaign_id/results.csv",
      operationId: "getCampaignResults",
      summary: "A campaign's results as CSV: one row per contact (status, attempts, last call, duration, outcome, and extracted data when the key also holds calls:read)",
      tag: "Campaigns",
      permission: "campaigns:read",
      params: campaignIdParam,
      response: z.string(),
      produces: "text/csv",
      fileName: (params) => `${params.campaign_id}-results.csv`,
      status: 200,
      errors: ["campaign_not_found", "unauthorized"],
      handler: async ({ auth, params }) => campaigns.resultsCsv(auth.account.id, params.campaign_id, { extractedData: grants(auth.permissions, "calls:read") }),
    }),
    ...(["pause", "resume", "cancel"] as const).map((action) =>
      defineRoute({
        method: "post",
        path: `/v1/campaigns/:campaign_id/${action}`,
        operationId: `${action}Campaign`,
        summary: ACTION_SUMMARIES[action],
        tag: "Campaigns",
        permission: "campaigns:write",
        params: campaignIdParam,
        response: campaignSchema,
        status: 200,
        errors: ["campaign_not_found", "unauthorized", "invalid_campaign_state"],
        handler: async ({ auth, params }) => presentCampaign(await campaigns.apply(auth.account.id, params.campaign_id, action)),
      }),
    ),
  ];
}
