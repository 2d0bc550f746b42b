import type { Services } from "../../services/container.js";
import { ApiError } from "../../core/api-error.js";
import { grants } from "../../services/permissions.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { idParam } from "../schemas/common.js";
import { handBackBody, listenTokenBody, listenTokenSchema, sayBody, supervisorActionSchema, whisperBody } from "../schemas/call-supervision.js";

const TAG = "Live supervision";
const callIdParam = idParam("call_id");
const ERRORS = ["invalid_request", "call_not_found", "unauthorized", "call_not_in_progress"];

/** Live supervision of a call in progress (docs/supervision.md). */
export function callSupervisionRoutes({ callSupervision }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/calls/:call_id/say",
      operationId: "sayOnCall",
      summary: "Have the agent say a line next, in its voice (it goes in the transcript as the agent's)",
      tag: TAG,
      permission: "calls:write",
      params: callIdParam,
      body: sayBody,
      response: supervisorActionSchema,
      status: 202,
      errors: ERRORS,
      handler: async ({ auth, params, body }) => callSupervision.act(auth.account.id, params.call_id, { action: "say", text: body.text }),
    }),
    defineRoute({
      method: "post",
      path: "/v1/calls/:call_id/whisper",
      operationId: "whisperOnCall",
      summary: "Give the agent guidance for its next replies, never spoken",
      tag: TAG,
      permission: "calls:write",
      params: callIdParam,
      body: whisperBody,
      response: supervisorActionSchema,
      status: 202,
      errors: ERRORS,
      handler: async ({ auth, params, body }) => callSupervision.act(auth.account.id, params.call_id, { action: "whisper", text: body.text }),
    }),
    defineRoute({
      method: "post",
      path: "/v1/calls/:call_id/hand-back",
      operationId: "handBackCall",
      summary: "End a supervisor's take-over: the agent has the call again",
      tag: TAG,
      permission: "calls:write",
      params: callIdParam,
      body: handBackBody,
      response: supervisorActionSchema,
      status: 202,
      errors: ERRORS,
      handler: async ({ auth, params }) => callSupervision.act(auth.account.id, params.call_id, { action: "hand_back" }),
    }),
    defineRoute({
      method: "post",
      path: "/v1/calls/:call_id/listen-token",
      operationId: "createListenToken",
      summary: "A single-use token (a minute) to open /media/listen on the call from a browser: listen (calls:read) or takeover (calls:write)",
      tag: TAG,
      permission: "calls:read",
      params: callIdParam,
      body: listenTokenBody,
      response: listenTokenSchema,
      status: 201,
      errors: [...ERRORS, "forbidden", "rate_limit_exceeded"],
      handler: async ({ auth, params, body }) => {
        if (body.mode === "takeover" && !grants(auth.permissions, "calls:write")) throw new ApiError(403, "forbidden", "A takeover token needs the 'calls:write' permission");
        return callSupervision.listenToken(auth.account.id, params.call_id, body.mode);
      },
    }),
  ];
}
