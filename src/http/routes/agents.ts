import type { Services } from "../../services/container.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { presentAgent } from "../presenters/agent.js";
import { presentCallListItem } from "../presenters/call.js";
import {
  agentListSchema,
  agentReadSchema,
  agentSchema,
  createAgentBody,
  getAgentQuery,
  listAgentsQuery,
  updateAgentBody,
} from "../schemas/agents.js";
import { deletedSchema, idParam } from "../schemas/common.js";

const agentIdParam = idParam("agent_id");

export function agentRoutes({ agents }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/agents",
      operationId: "createAgent",
      summary: "Create an agent",
      tag: "Agents",
      permission: "agents:write",
      body: createAgentBody,
      response: agentSchema,
      status: 201,
      errors: ["invalid_request", "invalid_voice_id", "invalid_system_prompt", "invalid_language", "agent_limit_reached"],
      handler: async ({ auth, body }) => presentAgent(await agents.create(auth.account, body, auth.permissions)),
    }),
    defineRoute({
      method: "get",
      path: "/v1/agents",
      operationId: "listAgents",
      summary: "List agents",
      tag: "Agents",
      permission: "agents:read",
      query: listAgentsQuery,
      response: agentListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "invalid_status"],
      handler: async ({ auth, query }) => {
        const { status, search, ...page } = query;
        return agents.list(auth.account.id, { status, search }, page);
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/agents/:agent_id",
      operationId: "getAgent",
      summary: "Read an agent",
      tag: "Agents",
      permission: "agents:read",
      params: agentIdParam,
      query: getAgentQuery,
      response: agentReadSchema,
      status: 200,
      errors: ["agent_not_found", "unauthorized", "invalid_request"],
      handler: async ({ auth, params, query }) => {
        const agent = await agents.get(auth.account.id, params.agent_id);
        return {
          ...presentAgent(agent),
          ...(query.include.has("stats") ? { stats: await agents.stats(auth.account.id, agent.id) } : {}),
          ...(query.include.has("recent_calls")
            ? { recent_calls: (await agents.recentCalls(auth.account.id, agent.id)).map(presentCallListItem) }
            : {}),
        };
      },
    }),
    defineRoute({
      method: "patch",
      path: "/v1/agents/:agent_id",
      operationId: "updateAgent",
      summary: "Update an agent (only the given fields change)",
      tag: "Agents",
      permission: "agents:write",
      params: agentIdParam,
      body: updateAgentBody,
      response: agentSchema,
      status: 200,
      errors: ["agent_not_found", "unauthorized", "invalid_request", "invalid_voice_id", "invalid_system_prompt", "invalid_language", "invalid_status"],
      handler: async ({ auth, params, body }) => presentAgent(await agents.update(auth.account.id, params.agent_id, body, auth.permissions)),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/agents/:agent_id",
      operationId: "deleteAgent",
      summary: "Delete an agent",
      tag: "Agents",
      permission: "agents:write",
      params: agentIdParam,
      response: deletedSchema,
      status: 200,
      errors: ["agent_not_found", "unauthorized", "agent_in_use"],
      handler: async ({ auth, params }) => {
        await agents.delete(auth.account.id, params.agent_id);
        return { id: params.agent_id, deleted: true };
      },
    }),
  ];
}
