import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { AnalysisInput } from "../../../../engine/analysis/call-analysis.js";
import { CallAnalyzer } from "../../../../engine/analysis/call-analyzer.js";
import { chatCompletionsStandin, type ChatRequest, type StandinReply } from "../../../../scripts/standins/openai-chat-standin.js";

// The model's analysis against the chat stand-in on loopback: one structured-output request,
// its answer checked, and the deterministic analysis standing in when the model fails.

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())))));
});

async function standin(reply?: (request: ChatRequest) => StandinReply, firstTokenDelayMs = 0) {
  const chat = chatCompletionsStandin({ firstTokenDelayMs, tokenIntervalMs: 0, ...(reply ? { reply } : {}) });
  const server = http.createServer((req, res) => void chat.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, chat };
}

const INPUT: AnalysisInput = {
  transcript: [
    { role: "agent", content: "Hello, this is Ava from Acme Dental. Is this a good time?", timestamp: 0 },
    { role: "user", content: "i am busy right now please call me back tomorrow", timestamp: 3.2 },
    { role: "agent", content: "Of course, we'll call you back on Thursday, November 26. Goodbye.", timestamp: 6.1 },
  ],
  actions: [{ type: "callback_requested", date: "2026-11-26", time: null }, { type: "end_call", reason: "callback_requested" }],
  endReason: "agent_ended",
  transferred: false,
  durationSeconds: 9,
  direction: "outbound",
  farEndNumber: "+14155550123",
  agentName: "Ava",
  fields: [
    { name: "best_time", type: "time", description: "When to call back" },
    { name: "mood", type: "enum", description: "How the callee sounded", enum: ["calm", "rushed"] },
    { name: "callee_email", type: "email", description: "The callee's email" },
  ],
  startedAt: new Date("2026-11-25T10:00:00Z"),
  timeZone: "Europe/London",
};

const MODEL_ANSWER = {
  summary: "Ava called; the callee was busy and asked for a call tomorrow.",
  outcome: "callback_requested",
  sentiment: { overall: "neutral", score: 0.45 },
  fields: { best_time: "09:30", mood: "rushed", callee_email: "not an email" },
};

describe("the call analyzer", () => {
  it("without a model: the deterministic analysis", async () => {
    const analysis = await new CallAnalyzer().analyze(INPUT, "llm-large");
    expect(analysis).toMatchObject({ source: "rules", outcome: "callback_requested", success: true });
  });

  it("with a model: one structured-output request whose schema is built from the fields, its answer checked", async () => {
    const peer = await standin(() => ({ text: JSON.stringify(MODEL_ANSWER) }));
    const analyzer = new CallAnalyzer({ model: { url: peer.url, models: { "llm-small": "small-model" } } });
    const analysis = await analyzer.analyze(INPUT, "llm-small");
    expect(analysis).toEqual({
      source: "llm",
      summary: MODEL_ANSWER.summary,
      outcome: "callback_requested",
      success: true,
      sentiment: { overall: "neutral", score: 0.45 },
      // The callback's day from the agent's action; a field value of the wrong form is null.
      extracted_data: { callback_date: "2026-11-26", callback_time: null, best_time: "09:30", mood: "rushed", callee_email: null },
    });
    const [request] = peer.chat.requests();
    expect(request!.model).toBe("small-model");
    expect(request!.response_format?.type).toBe("json_schema");
    const schema = request!.response_format!.json_schema.schema as any;
    expect(schema.properties.fields.required).toEqual(["best_time", "mood", "callee_email"]);
    expect(schema.properties.fields.properties.mood).toMatchObject({ type: ["string", "null"], enum: ["calm", "rushed", null] });
    // The outcome an action did not settle is the model's to choose among the others.
    expect(schema.properties.outcome.enum).toEqual(["information_provided", "callback_requested", "not_interested", "no_action"]);
    expect(request!.messages[1]!.content).toContain("Person: i am busy right now please call me back tomorrow");
  });

  it("keep an outcome the agent's actions settled: the schema allows only it", async () => {
    const peer = await standin();
    const booked: AnalysisInput = {
      ...INPUT,
      actions: [{ type: "tool_call", name: "book_appointment", arguments: { date: "2026-12-01", time: "15:00", service: "cleaning", customer_name: "Ann" }, result: { ok: true, data: { appointment_id: "apt_1" } } }],
    };
    // The stand-in's canned answer: the simplest JSON that follows the schema.
    const analysis = await new CallAnalyzer({ model: { url: peer.url, models: {} } }).analyze(booked, "llm-large");
    expect(analysis.source).toBe("llm");
    expect(analysis.outcome).toBe("appointment_booked");
    expect(analysis.extracted_data).toMatchObject({ appointment_id: "apt_1", appointment_date: "2026-12-01", customer_name: "Ann", customer_phone: "+14155550123" });
    expect((peer.chat.requests()[0]!.response_format!.json_schema.schema as any).properties.outcome.enum).toEqual(["appointment_booked"]);
  });

  it.each([
    ["an answer that is not JSON", () => ({ text: "Sure! Here is the analysis." }), /not JSON/],
    ["an outcome outside the schema", () => ({ text: JSON.stringify({ ...MODEL_ANSWER, outcome: "appointment_booked" }) }), /outcome "appointment_booked" is not one of/],
    ["a refused key", () => ({ error: { status: 401, message: "Incorrect API key provided." } }), /HTTP 401/],
    ["a service down through every retry", () => ({ error: { status: 503, message: "The server is overloaded." } }), /HTTP 503/],
  ] as const)("fall back to the deterministic analysis on %s, and say why", async (_name, reply, reason) => {
    const peer = await standin(reply as () => StandinReply);
    const analysis = await new CallAnalyzer({ model: { url: peer.url, models: {} } }).analyze(INPUT, "llm-large");
    expect(analysis).toMatchObject({ source: "rules_fallback", outcome: "callback_requested", extracted_data: { callback_date: "2026-11-26" } });
    expect(analysis.fallback_reason).toMatch(reason);
    expect(analysis.summary).toContain("asked to be called back");
  });

  it("retry a 503 and use the answer that follows", async () => {
    let failures = 1;
    const peer = await standin(() => (failures-- > 0 ? { error: { status: 503, message: "busy" } } : { text: JSON.stringify(MODEL_ANSWER) }));
    const analysis = await new CallAnalyzer({ model: { url: peer.url, models: {} } }).analyze(INPUT, "llm-large");
    expect(analysis.source).toBe("llm");
    expect(peer.chat.requests()).toHaveLength(2);
  });

  it("give up on a model slower than the bound", async () => {
    const peer = await standin(() => ({ text: JSON.stringify(MODEL_ANSWER) }), 2_000);
    const analysis = await new CallAnalyzer({ model: { url: peer.url, models: {} }, timeoutMs: 200 }).analyze(INPUT, "llm-large");
    expect(analysis).toMatchObject({ source: "rules_fallback", fallback_reason: "the model did not answer within 200 ms of the call's end" });
    // A call that waited its whole time for a turn gets the deterministic analysis at once.
    const late = await new CallAnalyzer({ model: { url: peer.url, models: {} }, timeoutMs: 200 }).analyze(INPUT, "llm-large", { withinMs: 0 });
    expect(late).toMatchObject({ source: "rules_fallback", fallback_reason: "no time was left for the model within 200 ms of the call's end" });
  });
});
