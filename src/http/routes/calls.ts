import type { Services } from "../../services/container.js";
import { presentCall, presentCallCreated } from "../presenters/call.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { callCreatedSchema, callListSchema, callReadSchema, callSchema, createCallBody, createWebCallBody, getCallQuery, listCallsQuery, webCallCreatedSchema } from "../schemas/calls.js";
import { idParam } from "../schemas/common.js";

const callIdParam = idParam("call_id");

export function callRoutes({ calls, callContent, recordingLinks, webCallTokens, config }: Services): RouteSpec[] {
  // Browsers connect to the same host and port as the API, over ws:// or wss:// as it is served.
  const mediaUrl = `${config.baseUrl.replace(/^http/, "ws")}/media/ws`;
  return [
    defineRoute({
      method: "post",
      path: "/v1/calls",
      operationId: "createCall",
      summary: "Start an outbound call (it is created queued)",
      tag: "Calls",
      permission: "calls:write",
      body: createCallBody,
      response: callCreatedSchema,
      // 200 as the reference's example shows, not 201.
      status: 200,
      errors: [
        "invalid_request",
        "invalid_phone_number",
        "invalid_from_number",
        "invalid_url",
        "url_unreachable",
        "agent_not_found",
        "agent_inactive",
        "insufficient_credits",
        "rate_limit_exceeded",
      ],
      handler: async ({ auth, body }) => presentCallCreated(await calls.create(auth.account, body)),
    }),
    defineRoute({
      method: "post",
      path: "/v1/calls/web",
      operationId: "createWebCall",
      summary: "Get a single-use token for a browser to start a call with an agent over /media/ws",
      tag: "Calls",
      permission: "calls:write",
      body: createWebCallBody,
      response: webCallCreatedSchema,
      status: 201,
      errors: ["invalid_request", "agent_not_found", "agent_inactive", "insufficient_credits", "rate_limit_exceeded"],
      secretFields: ["token", "websocket_url"],
      handler: async ({ auth, body }) => {
        const issued = await webCallTokens.issue(auth.account, body);
        return { call_id: issued.callId, token: issued.token, websocket_url: `${mediaUrl}?token=${issued.token}`, expires_at: issued.expiresAt };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/calls",
      operationId: "listCalls",
      summary: "List calls",
      tag: "Calls",
      permission: "calls:read",
      query: listCallsQuery,
      response: callListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "invalid_status", "invalid_phone_number", "invalid_date_format"],
      handler: async ({ auth, query }) => {
        const { status, outcome, agent_id, phone_number, direction, from_date, to_date, ...page } = query;
        const filters = { status, outcome, agentId: agent_id, phoneNumber: phone_number, direction, createdFrom: from_date, createdBefore: to_date };
        return calls.list(auth.account.id, filters, page);
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/calls/:call_id",
      operationId: "getCall",
      summary: "Read a call",
      tag: "Calls",
      permission: "calls:read",
      params: callIdParam,
      query: getCallQuery,
      response: callReadSchema,
      status: 200,
      errors: ["call_not_found", "unauthorized", "invalid_request"],
      handler: async ({ auth, params, query }) => presentCall(await calls.get(auth.account.id, params.call_id), query.include, (call) => recordingLinks.url(call)),
    }),
    defineRoute({
      method: "post",
      path: "/v1/calls/:call_id/end",
      operationId: "endCall",
      summary: "End a call",
      tag: "Calls",
      permission: "calls:write",
      params: callIdParam,
      response: callSchema,
      status: 200,
      errors: ["call_not_found", "unauthorized", "call_already_ended"],
      handler: async ({ auth, params }) => presentCall(await calls.end(auth.account.id, params.call_id), new Set()),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/calls/:call_id",
      operationId: "deleteCallContent",
      summary: "Delete what was said on an ended call (recording, transcript, analysis), for privacy requests; the billing record stays",
      tag: "Calls",
      permission: "calls:write",
      params: callIdParam,
      response: callSchema,
      status: 200,
      errors: ["call_not_found", "unauthorized", "call_not_ended", "call_analysis_pending"],
      handler: async ({ auth, params }) => presentCall(await callContent.remove(auth.account.id, params.call_id), new Set()),
    }),
  ];
}
