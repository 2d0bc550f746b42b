import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../src/core/api-error.js";
import type { StartedTestRun } from "../../src/services/test-runs.js";
import type { ScenarioResult, TestScenario } from "../../src/services/test-run-scenario.js";
import { databaseAt } from "../helpers/database-at.js";
import { recordTestRuns } from "../helpers/recorded-test-runs.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Agent test runs (issue 32), the API's side: validation, scoping, limits, storage and the
// completion event. The runs are carried out here by a stand-in carrier the test drives; the
// real one (scenarios played on the engine) is tested in test/e2e/test-runs.test.ts.

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;
let agentId: string;
let started: StartedTestRun[] = [];
/** The engine's refusal of a voice it lacks, stood in for. */
const refusal = (scenarios: readonly TestScenario[]) =>
  scenarios.some((s) => s.caller.voice === "nobody") ? ApiError.field("invalid_request", "scenarios[0].caller.voice", "must be an embedded voice") : null;

const scenario = (name = "asks the hours", extra: Record<string, unknown> = {}) => ({ name, caller: { lines: ["what are your opening hours", "goodbye"] }, expect: { must_say: ["open"] }, ...extra });
const create = (body: unknown, key = acct.key, agent = agentId) => app.request("POST", `/v1/agents/${agent}/test-runs`, { key, body });
const fieldsOf = (res: ApiResponse) => errorOf(res).details.fields.map((f: { field: string }) => f.field);
const passed = (name: string): ScenarioResult => ({ name, status: "passed", error: null, transcript: [{ role: "agent", content: "We are open nine to five.", timestamp: 0.5 }], turns: [{ line: 0, voice_to_voice_ms: 900 }], outcome: "information_provided", expectations: [{ name: "must_say: open", passed: true, expected: "open", seen: "open" }] });

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  other = await app.account();
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "You answer calls.", voice_id: "flite-slt" } });
  agentId = agent.body.id;
});
afterAll(async () => {
  await app.close();
});

describe("without a carrier (a node without the engine)", () => {
  it("refuses with 409 test_runs_unavailable, after checking the agent", async () => {
    const res = await create({ scenarios: [scenario()] });
    expect(res.status).toBe(409);
    expect(errorOf(res).code).toBe("test_runs_unavailable");
    expect((await create({ scenarios: [scenario()] }, acct.key, "agent_nope")).status).toBe(404);
  });
});

describe("POST /v1/agents/{id}/test-runs", () => {
  beforeAll(() => {
    started = recordTestRuns(app, refusal);
  });

  it("validates every field, naming it", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "scenarios"],
      [{ scenarios: [] }, "scenarios"],
      [{ scenarios: Array.from({ length: 11 }, (_, i) => scenario(`s${i}`)) }, "scenarios"],
      [{ scenarios: [scenario(""), scenario("b")] }, "scenarios[0].name"],
      [{ scenarios: [scenario("a"), scenario("a")] }, "scenarios[1].name"],
      [{ scenarios: [{ name: "x", caller: { lines: [] } }] }, "scenarios[0].caller.lines"],
      [{ scenarios: [{ name: "x", caller: { lines: ["a".repeat(501)] } }] }, "scenarios[0].caller.lines[0]"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"], pause_ms: 50 } }] }, "scenarios[0].caller.pause_ms"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"], noise_db: 90 } }] }, "scenarios[0].caller.noise_db"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"], barge_in: [1] } }] }, "scenarios[0].caller.barge_in[0]"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"], shout: true } }] }, "scenarios[0].caller.shout"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"] }, expect: { outcome: "happy" } }] }, "scenarios[0].expect.outcome"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"] }, expect: { max_voice_to_voice_ms: 10 } }] }, "scenarios[0].expect.max_voice_to_voice_ms"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"] }, expect: { appointment: { time: "3pm" } } }] }, "scenarios[0].expect.appointment.time"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"] }, expect: { must_say: Array(21).fill("a") } }] }, "scenarios[0].expect.must_say"],
      [{ scenarios: [{ name: "x", caller: { lines: ["hi"], voice: "nobody" } }] }, "scenarios[0].caller.voice"],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(fieldsOf(res), JSON.stringify(body)).toContain(field);
    }
    expect(started).toHaveLength(0);
  });

  it("answers 403 unauthorized for another account's agent (as every agent route does), and 403 without agents:write", async () => {
    expect(errorOf(await create({ scenarios: [scenario()] }, other.key)).code).toBe("unauthorized");
    const reader = await app.key(acct.id, ["agents:read"]);
    expect((await create({ scenarios: [scenario()] }, reader)).status).toBe(403);
    expect(started).toHaveLength(0);
  });

  it("stores the run with its defaults, starts it, shows progress while it runs, and ends it with test_run.completed", async () => {
    const res = await create({ scenarios: [scenario("first"), scenario("second", { caller: { lines: ["hi"], noise_db: 20, barge_in: [0] } })] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^testrun_/), agent_id: agentId, status: "running", completed_at: null, error: null });
    expect(res.body.scenarios.map((s: ScenarioResult) => s.status)).toEqual(["pending", "pending"]);
    const run = started.at(-1)!;
    expect(run).toMatchObject({ id: res.body.id, accountId: acct.id, agentId });
    expect(run.scenarios[0]!.caller).toEqual({ lines: ["what are your opening hours", "goodbye"], voice: "flite-rms", pause_ms: 800, noise_db: null, barge_in: [] });
    expect(run.scenarios[1]!.caller).toMatchObject({ noise_db: 20, barge_in: [0] });

    const { testRuns } = app.parley.services;
    await testRuns.progress(run.id, [passed("first"), { ...passed("second"), status: "running", expectations: [] }]);
    const midway = await app.request("GET", `/v1/agents/${agentId}/test-runs/${run.id}`, { key: acct.key });
    expect(midway.body.status).toBe("running");
    expect(midway.body.scenarios[0]).toEqual(passed("first"));

    const failed = { ...passed("second"), status: "failed" as const, expectations: [{ name: "must_say: open", passed: false, expected: "open", seen: null }] };
    await testRuns.finish(run, [passed("first"), failed]);
    const done = await app.request("GET", `/v1/agents/${agentId}/test-runs/${run.id}`, { key: acct.key });
    expect(done.body).toMatchObject({ status: "failed", completed_at: expect.any(String), scenarios: [passed("first"), failed] });
    const stored = (await app.request("GET", "/v1/events?name=test_run.completed", { key: acct.key })).body;
    expect(stored.data).toHaveLength(1);
    expect(stored.data[0].data).toMatchObject({ id: run.id, status: "failed" });

    // A second end (a recovery racing it) changes nothing.
    await testRuns.finish(run, [], "late");
    expect((await app.request("GET", `/v1/agents/${agentId}/test-runs/${run.id}`, { key: acct.key })).body.status).toBe("failed");
  });

  it("lets an account run two at once (409 test_run_limit_reached for a third)", async () => {
    const a = await create({ scenarios: [scenario()] });
    const b = await create({ scenarios: [scenario()] });
    expect([a.status, b.status]).toEqual([201, 201]);
    const third = await create({ scenarios: [scenario()] });
    expect(third.status).toBe(409);
    expect(errorOf(third).code).toBe("test_run_limit_reached");
    await app.parley.services.testRuns.finish(started.at(-1)!, [passed("asks the hours")]);
    expect((await create({ scenarios: [scenario()] })).status).toBe(201);
  });

  it("lists an agent's runs newest first, pages them, and shows none to another account", async () => {
    const page = await app.request("GET", `/v1/agents/${agentId}/test-runs?limit=2`, { key: acct.key });
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.has_more).toBe(true);
    expect(page.body.total).toBe(4);
    const next = await app.request("GET", `/v1/agents/${agentId}/test-runs?limit=2&cursor=${page.body.next_cursor}`, { key: acct.key });
    expect(next.body.data.map((r: { id: string }) => r.id)).toEqual(started.slice(0, 2).map((r) => r.id).reverse());
    expect(errorOf(await app.request("GET", `/v1/agents/${agentId}/test-runs`, { key: other.key })).code).toBe("unauthorized");
    const runId = page.body.data[0].id;
    expect(errorOf(await app.request("GET", `/v1/agents/${agentId}/test-runs/${runId}`, { key: other.key })).code).toBe("unauthorized");
    const otherAgent = (await app.request("POST", "/v1/agents", { key: other.key, body: { name: "Other", system_prompt: "x", voice_id: "flite-slt" } })).body.id;
    expect(errorOf(await app.request("GET", `/v1/agents/${otherAgent}/test-runs/${runId}`, { key: other.key })).code).toBe("test_run_not_found");
    expect(errorOf(await app.request("GET", `/v1/agents/${agentId}/test-runs/testrun_nope`, { key: acct.key })).code).toBe("test_run_not_found");
  });

  it("ends as error, at the next start, the runs a stopped process left running; their finished scenarios stay", async () => {
    const { testRuns } = app.parley.services;
    const running = started.filter((r) => r.accountId === acct.id).at(-1)!;
    await testRuns.progress(running.id, [passed("asks the hours")]);
    expect(await testRuns.endLost(true, Date.now())).toBeGreaterThanOrEqual(1);
    const ended = (await app.request("GET", `/v1/agents/${agentId}/test-runs/${running.id}`, { key: acct.key })).body;
    expect(ended).toMatchObject({ status: "error", error: "the node carrying the run stopped before it finished" });
    expect(ended.scenarios[0]).toEqual(passed("asks the hours"));
  });
});

describe("the daily scenario allowance over an upgrade (migration 038 counts the stored runs)", () => {
  it("counts the scenarios of the last 24 hours' runs stored before it, and not older ones", async () => {
    const older = await databaseAt("037-test-audio");
    const { db } = older;
    const at = new Date().toISOString();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_old', 'Old', 'pro', 100, 's', '{}', ${at}, ${at})`.execute(db);
    await sql`INSERT INTO agents (id, account_id, name, system_prompt, voice_id, language, model, temperature, max_tokens, interruption_threshold, end_call_phrases, status, metadata, transfer_message, created_at, updated_at)
      VALUES ('agent_old', 'acct_old', 'Desk', 'You answer calls.', 'flite-slt', 'en-US', 'rules', 0.7, 300, 0.5, '[]', 'active', '{}', '', ${at}, ${at})`.execute(db);
    const run = async (id: string, scenarios: number, hoursAgo: number) => {
      const created = new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
      const stored = JSON.stringify(Array.from({ length: scenarios }, (_, i) => scenario(`s${i}`)));
      await sql`INSERT INTO test_runs (id, account_id, agent_id, status, scenarios, results, error, node_id, created_at, completed_at)
        VALUES (${id}, 'acct_old', 'agent_old', 'passed', ${stored}, '[]', NULL, NULL, ${created}, ${created})`.execute(db);
    };
    await run("testrun_hourago", 190, 1);
    await run("testrun_recent", 8, 0.5);
    await run("testrun_yesterday", 150, 25);
    await db.destroy();

    const upgraded = await startTestApp(...older.appArgs);
    try {
      recordTestRuns(upgraded);
      const key = await upgraded.key("acct_old");
      const post = (count: number) => upgraded.request("POST", "/v1/agents/agent_old/test-runs", { key, body: { scenarios: Array.from({ length: count }, (_, i) => scenario(`new ${i}`)) } });
      // 198 in the last 24 hours: 3 more would pass the 200; 2 reach it exactly.
      const three = await post(3);
      expect(three.status).toBe(409);
      expect(errorOf(three)).toMatchObject({ code: "test_run_limit_reached", message: expect.stringContaining("200 test scenarios in 24 hours (198 so far)") });
      expect((await post(2)).status).toBe(201);
      expect(errorOf(await post(1)).message).toContain("(200 so far)");
    } finally {
      await upgraded.close();
      await older.cleanUp();
    }
  });
});
