import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallAction, CallLatency } from "../../engine/index.js";
import { chatCompletionsStandin, type StandinReply } from "../../scripts/standins/openai-chat-standin.js";
import { loadConfig } from "../../src/config.js";
import { EventsRepository } from "../../src/db/repositories/events.js";
import type { CallRecord } from "../../src/db/repositories/calls.js";
import { startParley, type Parley } from "../../src/main.js";
import type { Services } from "../../src/services/container.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// The analysis of ended calls as the API and the events show it, with calls begun and ended
// through the live-call service as the media side does (no audio: the conversation tests in
// test/e2e/call-outcomes.test.ts run the real pipeline).

const BOOKED: CallAction = {
  type: "tool_call",
  name: "book_appointment",
  arguments: { customer_name: "John Smith", date: "2026-12-01", time: "15:00", service: "cleaning" },
  result: { ok: true, data: { status: "booked", appointment_id: "apt_x", date: "2026-12-01", time: "15:00" } },
};
const TRANSCRIPT = [
  { role: "agent" as const, content: "Hello, this is Ava from Acme Dental.", timestamp: 0 },
  { role: "user" as const, content: "i would like to book a cleaning for tuesday at three my name is john smith", timestamp: 2.1 },
  { role: "agent" as const, content: "You're all set. Your cleaning is booked.", timestamp: 5.3 },
  { role: "user" as const, content: "great thank you goodbye", timestamp: 8 },
];
const LATENCY: CallLatency = {
  turns: [
    { turn_id: 1, end_of_speech_at: null, endpoint_ms: null, asr_final_ms: null, first_token_ms: 3, first_audio_ms: 40, voice_to_voice_ms: 61, interrupted: false },
    { turn_id: 2, end_of_speech_at: 4.62, endpoint_ms: 500, asr_final_ms: 540, first_token_ms: 542, first_audio_ms: 580, voice_to_voice_ms: 600, interrupted: false },
  ],
  voice_to_voice_p50_ms: 600,
  voice_to_voice_p95_ms: 600,
};

/** A web call begun and ended as the media gateway does it. */
async function talk(services: Services, accountId: string, agentId: string, end: { actions?: CallAction[]; latency?: CallLatency; endReason?: "agent_ended" | "caller_hangup" } = {}): Promise<CallRecord> {
  const account = (await services.accounts.find(accountId))!;
  const agent = await services.agents.get(accountId, agentId);
  const call = await services.liveCalls.begin({ account, agent, direction: "web", phoneNumber: null, fromNumber: null, record: false, maxDuration: 600, metadata: {}, context: {} });
  await services.liveCalls.end(call.id, {
    status: "completed",
    durationMs: 9_400,
    transcript: TRANSCRIPT,
    recordingPath: null,
    endReason: end.endReason ?? "agent_ended",
    actions: end.actions ?? [BOOKED, { type: "end_call", reason: "caller_goodbye" }],
    latency: end.latency ?? LATENCY,
  });
  return call;
}

const eventNames = async (services: Services, callId: string) => (await new EventsRepository(services.db).forCall(callId)).map((e) => e.name);

describe("call analysis through the API (deterministic)", () => {
  let app: TestApp;
  let acct: TestAccount;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp();
    acct = await app.account();
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: {
        name: "Ava",
        system_prompt: "You book appointments.",
        voice_id: "flite-slt",
        analysis_fields: [
          { name: "patient_name", type: "string", description: "The patient's name" },
          { name: "insurer", type: "enum", description: "The patient's insurer", enum: ["aetna", "cigna"] },
        ],
      },
    });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
  }, 30_000);
  afterAll(() => app?.close());

  it("stores the analysis with the call's end, and GET include=analysis,latency returns it", async () => {
    const call = await talk(app.parley.services, acct.id, agentId);
    const read = await app.request("GET", `/v1/calls/${call.id}?include=analysis,latency`, { key: acct.key });
    expect(read.status).toBe(200);
    expect(read.body.analysis).toEqual({
      source: "rules",
      summary: "Web call with Ava, 9 s. The caller booked a cleaning appointment on 2026-12-01 at 15:00 for John Smith. The caller's tone was positive.",
      outcome: "appointment_booked",
      success: true,
      sentiment: { overall: "positive", score: expect.any(Number) },
      extracted_data: {
        appointment_id: "apt_x",
        appointment_date: "2026-12-01",
        appointment_time: "15:00",
        service: "cleaning",
        customer_name: "John Smith",
        customer_email: null,
        customer_phone: null,
        // "my name is john smith" names the field; nobody named an insurer.
        patient_name: "john smith",
        insurer: null,
      },
    });
    expect(read.body.latency).toEqual(LATENCY);
    // Without include, neither is there.
    const plain = await app.request("GET", `/v1/calls/${call.id}`, { key: acct.key });
    expect(plain.body).not.toHaveProperty("analysis");
    expect(plain.body).not.toHaveProperty("latency");
  });

  it("sends call.completed with the outcome, extracted data, sentiment and summary, before the transcript", async () => {
    const call = await talk(app.parley.services, acct.id, agentId);
    const events = await new EventsRepository(app.parley.services.db).forCall(call.id);
    expect(events.map((e) => e.name)).toEqual(["call.started", "call.answered", "call.completed", "call.transcript.ready"]);
    const completed = events[2]!.data;
    expect(completed).toMatchObject({
      call_id: call.id,
      outcome: "appointment_booked",
      success: true,
      sentiment: { overall: "positive" },
      extracted_data: { appointment_date: "2026-12-01", insurer: null },
    });
    expect(completed.summary).toMatch(/booked a cleaning appointment/);
  });

  it("lists calls by outcome, and refuses an outcome that is not one", async () => {
    const booked = await talk(app.parley.services, acct.id, agentId);
    const quiet = await talk(app.parley.services, acct.id, agentId, { actions: [], endReason: "caller_hangup" });
    const list = await app.request("GET", `/v1/calls?outcome=no_action&agent_id=${agentId}`, { key: acct.key });
    expect(list.status).toBe(200);
    const ids = list.body.data.map((c: { id: string }) => c.id);
    expect(ids).toContain(quiet.id);
    expect(ids).not.toContain(booked.id);
    expect(list.body.total).toBe(ids.length);

    const bad = await app.request("GET", "/v1/calls?outcome=sold", { key: acct.key });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).details.fields[0]).toMatchObject({ field: "outcome" });
    expect(errorOf(bad).details.fields[0].message).toContain("appointment_booked");
  });

  it("counts the agent's calls by outcome in its stats", async () => {
    const stats = (await app.request("GET", `/v1/agents/${agentId}?include=stats`, { key: acct.key })).body.stats;
    expect(stats.outcomes.appointment_booked).toBeGreaterThanOrEqual(1);
    expect(Object.keys(stats.outcomes)).toHaveLength(11);
  });

  it("rebuilds a call's actions from what was stored when its media did not end it (a restart, POST /end)", async () => {
    const services = app.parley.services;
    const call = await insertCallRow(services.db, { account_id: acct.id, agent_id: agentId, direction: "outbound", status: "in_progress", answered_at: new Date(Date.now() - 30_000).toISOString() });
    await services.appointments.create({ account_id: acct.id, agent_id: agentId, call_id: call.id, date: "2026-12-02", time: "10:00", customer_name: "Ann Lee", service: "checkup" });
    const ended = await app.request("POST", `/v1/calls/${call.id}/end`, { key: acct.key });
    expect(ended.status).toBe(200);
    const read = await app.request("GET", `/v1/calls/${call.id}?include=analysis,latency`, { key: acct.key });
    expect(read.body.analysis).toMatchObject({ outcome: "appointment_booked", extracted_data: { appointment_date: "2026-12-02", customer_name: "Ann Lee", customer_phone: "+14155550123" } });
    // No media ran here: no turn was measured.
    expect(read.body.latency).toBeNull();
  });

  it("keeps analysis and latency null for a call that never connected", async () => {
    const call = await insertCallRow(app.parley.services.db, { account_id: acct.id, agent_id: agentId, status: "no_answer" });
    const read = await app.request("GET", `/v1/calls/${call.id}?include=analysis,latency`, { key: acct.key });
    expect(read.body).toMatchObject({ analysis: null, latency: null });
  });
});

describe("agents' analysis_fields", () => {
  let app: TestApp;
  let acct: TestAccount;
  beforeAll(async () => {
    app = await startTestApp();
    acct = await app.account();
  }, 30_000);
  afterAll(() => app?.close());

  const create = (analysis_fields: unknown) => app.request("POST", "/v1/agents", { key: acct.key, body: { name: "A", system_prompt: "x", voice_id: "flite-slt", analysis_fields } });

  it("are empty by default, and kept as given", async () => {
    const plain = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "A", system_prompt: "x", voice_id: "flite-slt" } });
    expect(plain.body.analysis_fields).toEqual([]);
    const fields = [
      { name: "party_size", type: "number", description: "How many people" },
      { name: "plan", type: "enum", description: "The plan", enum: ["basic", "premium"] },
    ];
    const made = await create(fields);
    expect(made.status).toBe(201);
    expect(made.body.analysis_fields).toEqual(fields);
    const patched = await app.request("PATCH", `/v1/agents/${made.body.id}`, { key: acct.key, body: { analysis_fields: [fields[0]] } });
    expect(patched.body.analysis_fields).toEqual([fields[0]]);
  });

  it.each([
    ["a type that is not one", [{ name: "x", type: "money", description: "d" }], "analysis_fields[0].type", /must be one of string, number/],
    ["an enum without values", [{ name: "x", type: "enum", description: "d" }], "analysis_fields[0].enum", /required when type is enum/],
    ["values on a field that is no enum", [{ name: "x", type: "string", description: "d", enum: ["a"] }], "analysis_fields[0].enum", /only for fields of type enum/],
    ["a name the analysis fills itself", [{ name: "customer_phone", type: "phone", description: "d" }], "analysis_fields[0].name", /filled by the analysis itself/],
    ["a name that is not snake_case", [{ name: "Party Size", type: "number", description: "d" }], "analysis_fields[0].name", /snake_case/],
    ["a name given twice", [{ name: "a", type: "number", description: "d" }, { name: "a", type: "date", description: "d" }], "analysis_fields[1].name", /repeats/],
    ["an empty description", [{ name: "a", type: "number", description: " " }], "analysis_fields[0].description", /must not be empty/],
    ["an unknown key", [{ name: "a", type: "number", description: "d", format: "x" }], "analysis_fields[0].format", /unknown field/],
    ["too many fields", Array.from({ length: 31 }, (_, i) => ({ name: `f${i}`, type: "string", description: "d" })), "analysis_fields", /at most 30/],
  ])("refuse %s, naming the field", async (_name, fields, field, message) => {
    const res = await create(fields);
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("invalid_request");
    const problem = errorOf(res).details.fields.find((f: { field: string }) => f.field === field);
    expect(problem, JSON.stringify(errorOf(res).details.fields)).toBeDefined();
    expect(problem.message).toMatch(message);
  });

  it("are in the OpenAPI document, with the analysis and latency of calls", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const text = JSON.stringify(doc);
    expect(text).toContain("analysis_fields");
    expect(text).toContain("voice_to_voice_p95_ms");
    expect(text).toContain("rules_fallback");
  });
});

describe("call analysis written by a model", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-analysis-"));
  let reply: () => StandinReply = () => ({ text: "" });
  let firstTokenDelayMs = 0;
  let server: http.Server;
  let url = "";

  beforeAll(async () => {
    const chat = chatCompletionsStandin({ firstTokenDelayMs: 0, tokenIntervalMs: 0, reply: () => reply() });
    server = http.createServer((req, res) => {
      // A slow model: the answer starts only after the delay the test sets.
      setTimeout(() => void chat.handle(req, res), firstTokenDelayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (timeoutMs = 5_000): Promise<Parley> =>
    startParley(
      loadConfig({
        env: { PARLEY_ENGINE: "0", PARLEY_SIP_PORT: "0", PARLEY_LLM_PROVIDER: "openai", PARLEY_LLM_URL: url, PARLEY_ANALYSIS_TIMEOUT_MS: String(timeoutMs) },
        cwd: dataDir,
        overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent" },
      }),
      pino({ level: "silent" }),
    );

  async function setUp(parley: Parley) {
    const account = await parley.services.accounts.create({ name: "M", plan: "pro", credits: 100 });
    const agent = await parley.services.agents.create(account, {
      name: "Ava",
      system_prompt: "x",
      voice_id: "flite-slt",
      analysis_fields: [{ name: "mood", type: "enum", description: "The caller's mood", enum: ["calm", "rushed"] }],
    } as never, ["*"]);
    return { accountId: account.id, agentId: agent.id };
  }

  const MODEL_ANSWER = {
    summary: "John booked a cleaning for Tuesday afternoon.",
    outcome: "appointment_booked",
    sentiment: { overall: "positive", score: 0.9 },
    fields: { mood: "calm" },
  };

  it("holds call.completed until the model's analysis is stored, then sends it with the model's summary", async () => {
    reply = () => ({ text: JSON.stringify(MODEL_ANSWER) });
    firstTokenDelayMs = 300;
    const parley = await start();
    try {
      const { accountId, agentId } = await setUp(parley);
      const call = await talk(parley.services, accountId, agentId);
      const ended = (await parley.services.calls.get(accountId, call.id))!;
      expect(ended).toMatchObject({ status: "completed", analysis_pending: true, outcome: "appointment_booked" });
      expect(await eventNames(parley.services, call.id)).toEqual(["call.started", "call.answered"]);
      await parley.services.callResults.idle();
      const stored = await parley.services.calls.get(accountId, call.id);
      expect(stored.analysis).toMatchObject({ source: "llm", summary: MODEL_ANSWER.summary, extracted_data: { mood: "calm", appointment_id: "apt_x" } });
      const events = await new EventsRepository(parley.services.db).forCall(call.id);
      expect(events.map((e) => e.name)).toEqual(["call.started", "call.answered", "call.completed", "call.transcript.ready"]);
      expect(events[2]!.data).toMatchObject({ summary: MODEL_ANSWER.summary, sentiment: { overall: "positive", score: 0.9 }, outcome: "appointment_booked" });
    } finally {
      await parley.stop();
    }
  });

  it("falls back to the deterministic analysis when the model fails, and says so", async () => {
    reply = () => ({ error: { status: 400, message: "response_format is not supported by this model" } });
    firstTokenDelayMs = 0;
    const parley = await start();
    try {
      const { accountId, agentId } = await setUp(parley);
      const call = await talk(parley.services, accountId, agentId);
      await parley.services.callResults.idle();
      const stored = await parley.services.calls.get(accountId, call.id);
      expect(stored.analysis).toMatchObject({ source: "rules_fallback", outcome: "appointment_booked", extracted_data: { mood: null } });
      expect(stored.analysis!.fallback_reason).toMatch(/HTTP 400: response_format is not supported/);
      expect(await eventNames(parley.services, call.id)).toContain("call.completed");
    } finally {
      await parley.stop();
    }
  });

  it("finishes after a restart an analysis the stopped process left under way, sending call.completed once", async () => {
    reply = () => ({ text: JSON.stringify(MODEL_ANSWER) });
    firstTokenDelayMs = 10_000;
    let parley = await start(20_000);
    const { accountId, agentId } = await setUp(parley);
    const call = await talk(parley.services, accountId, agentId);
    await parley.stop();
    firstTokenDelayMs = 0;
    parley = await start();
    try {
      await parley.services.callResults.idle();
      const stored = await parley.services.calls.get(accountId, call.id);
      expect(stored).toMatchObject({ analysis_pending: false, analysis: { source: "llm" } });
      expect((await eventNames(parley.services, call.id)).filter((n) => n === "call.completed")).toHaveLength(1);
    } finally {
      await parley.stop();
    }
  });
});
