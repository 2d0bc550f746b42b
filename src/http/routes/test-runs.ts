import type { Services } from "../../services/container.js";
import type { TestScenario } from "../../services/test-run-scenario.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { createTestRunBody, listTestRunsQuery, testRunIdParams, testRunListSchema, testRunParams, testRunSchema } from "../schemas/test-runs.js";

const TAG = "Agent test runs";

export function testRunRoutes({ testRuns }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/agents/:agent_id/test-runs",
      operationId: "createTestRun",
      summary: "Test an agent: each scenario is a simulated call in which a caller says its lines, checked against what it should bring about (docs/test-runs.md)",
      tag: TAG,
      permission: "agents:write",
      params: testRunParams,
      body: createTestRunBody,
      response: testRunSchema,
      status: 201,
      errors: ["invalid_request", "agent_not_found", "unauthorized", "agent_inactive", "test_run_limit_reached", "test_runs_unavailable"],
      handler: async ({ auth, params, body }) => testRuns.create(auth.account.id, params.agent_id, body.scenarios as TestScenario[]),
    }),
    defineRoute({
      method: "get",
      path: "/v1/agents/:agent_id/test-runs",
      operationId: "listTestRuns",
      summary: "List an agent's test runs, newest first",
      tag: TAG,
      permission: "agents:read",
      params: testRunParams,
      query: listTestRunsQuery,
      response: testRunListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "agent_not_found", "unauthorized"],
      handler: async ({ auth, params, query }) => testRuns.list(auth.account.id, params.agent_id, query),
    }),
    defineRoute({
      method: "get",
      path: "/v1/agents/:agent_id/test-runs/:run_id",
      operationId: "getTestRun",
      summary: "Get a test run: its status and, per scenario, the transcript, each turn's latency and each expectation with what was seen",
      tag: TAG,
      permission: "agents:read",
      params: testRunIdParams,
      response: testRunSchema,
      status: 200,
      errors: ["invalid_request", "agent_not_found", "unauthorized", "test_run_not_found"],
      handler: async ({ auth, params }) => testRuns.get(auth.account.id, params.agent_id, params.run_id),
    }),
  ];
}
