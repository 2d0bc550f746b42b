import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import type { ChatRequest, StandinReply } from "../../scripts/standins/openai-chat-standin.js";
import { startStandinServer, type StandinServer } from "../../scripts/standins/standin-server.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { AGENT_QUIET_MS, agentLines, scriptedCall, standinProviders } from "../helpers/standin-call.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, verifyParleySignature, type ReceiverAnswer, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// Issue 31: an agent's own HTTP tool, called mid-call by an OpenAI-compatible model (a local
// stand-in speaking its wire protocol), answered by the integrator's receiver on loopback.

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");
/** What the caller sends: one second of speech (the stand-ins "hear" a scripted text in it, whatever it says). */
const LINE = parseWav(readFileSync(path.join(FIXTURES, "opening-hours.16k.wav"))).samples.subarray(4000, 20000);
const SIGNING_SECRET = "whsec-tool-signing-0123456789";
const API_TOKEN = "orders-api-token-abcdef";
/** The agents' greeting and the model's answer to a failed tool: short, as the stand-in speaks in real time. */
const GREETING = "Hello.";
const FAILURE_REPLY = "Sorry, that failed.";

let standins: StandinServer;
let app: TestApp;
let acct: TestAccount;
let orders: WebhookReceiver;
/** A second receiver a redirect points at: it must never be reached. */
let elsewhere: WebhookReceiver;
/** The arguments the model passes to order_status in the next call. */
let modelArguments: Record<string, unknown> = { order_id: "A123" };

/** The model: asks for order_status, then says what the tool message told it. */
function modelReply(request: ChatRequest): StandinReply {
  if (request.response_format) return { text: "{}" };
  const tool = request.messages.findLast((m) => m.role === "tool");
  if (!tool) return { toolCalls: [{ name: "order_status", arguments: modelArguments }] };
  const answer = JSON.parse(String(tool.content)) as { status?: string; error?: string };
  // The tool message is {status: "ok", ...answer} or {status: "error", error}.
  // A failure is said briefly (the stand-in speaks in real time); what the tool reported is checked on the tool_call event.
  return { text: answer.error === undefined ? `Your order is ${answer.status}.` : FAILURE_REPLY };
}

beforeAll(async () => {
  standins = await startStandinServer({ asrFinalMs: 50, llmFirstTokenMs: 50, llmTokenMs: 5, ttsFirstByteMs: 50 }, 0, { chatReply: modelReply });
  orders = await startWebhookReceiver("/orders");
  elsewhere = await startWebhookReceiver("/elsewhere");
  app = await startTestApp({}, standinProviders(standins.url, { chat: true }));
  acct = await app.account({ credits: 100 });
  for (const [name, value] of [
    ["ORDERS_SIGNING", SIGNING_SECRET],
    ["ORDERS_TOKEN", API_TOKEN],
  ]) {
    expect((await app.request("POST", "/v1/secrets", { key: acct.key, body: { name, value } })).status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await app?.close();
  await standins?.close();
  await orders?.close();
  await elsewhere?.close();
});

const orderStatusTool = (timeoutMs = 2000) => ({
  name: "order_status",
  description: "Looks up where a customer's order is.",
  parameters: { type: "object", properties: { order_id: { type: "string", description: "The order number." } }, required: ["order_id"], additionalProperties: false },
  url: orders.url,
  timeout_ms: timeoutMs,
  headers: { Authorization: "Bearer {{secrets.ORDERS_TOKEN}}" },
  signing_secret: "ORDERS_SIGNING",
});

/** A call to an agent with the order_status tool: the caller asks once; the tool runs as `answer` says. */
async function callWithTool(answer: (index: number) => ReceiverAnswer | Promise<ReceiverAnswer>, timeoutMs?: number) {
  orders.answer((_request, index) => answer(index));
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Orders", system_prompt: "You tell customers where their orders are.", voice_id: "openai-alloy", first_message: GREETING, tools: [orderStatusTool(timeoutMs)] },
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  const client = await scriptedCall(app.baseUrl, acct.key, agent.body.id, LINE, 1);
  const toolCalls = client.messages.filter((m) => m.message.type === "tool_call").map((m) => m.message as any);
  return { agentId: agent.body.id as string, said: agentLines(client).at(-1), toolCalls };
}

describe("a custom HTTP tool on a call", () => {
  it("is called signed, with the secret in its header, and the agent says the integrator's answer", async () => {
    const before = orders.received.length;
    modelArguments = { order_id: "A123" };
    const { agentId, said, toolCalls } = await callWithTool(() => ({ status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "shipped", carrier: "UPS" }) }));
    const [request] = orders.received.slice(before);
    expect(request).toBeDefined();
    expect(verifyParleySignature(request!.headers["x-parley-signature"] as string, request!.rawBody, SIGNING_SECRET)).toBe(true);
    expect(verifyParleySignature(request!.headers["x-parley-signature"] as string, request!.rawBody, "another secret")).toBe(false);
    expect(request!.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
    expect(request!.body).toMatchObject({ tool: "order_status", arguments: { order_id: "A123" }, agent_id: agentId, call_id: expect.stringMatching(/^call_/) });
    expect(said).toBe("Your order is shipped.");
    expect(toolCalls).toEqual([expect.objectContaining({ name: "order_status", ok: true, data: { status: "shipped", carrier: "UPS" } })]);
    // The agent as the API shows it keeps the reference, never the value.
    const shown = await app.request("GET", `/v1/agents/${agentId}`, { key: acct.key });
    expect(shown.body.tools[0].headers).toEqual({ Authorization: "Bearer {{secrets.ORDERS_TOKEN}}" });
    expect(JSON.stringify(shown.body)).not.toContain(API_TOKEN);
  }, 60_000);

  it("shows a browser call's visitor only each tool's name and outcome, not its arguments or the integrator's answer", async () => {
    modelArguments = { order_id: "A123" };
    orders.answer(() => ({ status: 200, body: JSON.stringify({ status: "shipped", internal_note: "customer owes 40 dollars" }) }));
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Orders", system_prompt: "You tell customers where their orders are.", voice_id: "openai-alloy", first_message: GREETING, tools: [orderStatusTool()] },
    });
    const web = await app.request("POST", "/v1/calls/web", { key: acct.key, body: { agent_id: agent.body.id } });
    expect(web.status, JSON.stringify(web.body)).toBe(201);
    const url = `${web.body.websocket_url.replace(/^ws:\/\/[^/]+/, app.baseUrl.replace(/^http/, "ws"))}&format=pcm16&sample_rate=16000`;
    // No API key: the single-use token is the browser's only credential.
    const client = await NativeMediaClient.connect(url, "none", 16000);
    client.startStreaming();
    await client.waitForAgentSilence(AGENT_QUIET_MS, 0, 15_000);
    const saidAt = await client.say(LINE);
    await client.waitForAgentSilence(AGENT_QUIET_MS, saidAt, 15_000);
    client.hangUp();
    await client.closed;
    expect(agentLines(client).at(-1)).toBe("Your order is shipped.");
    const toolCalls = client.messages.filter((m) => m.message.type === "tool_call").map((m) => m.message);
    expect(toolCalls).toEqual([{ type: "tool_call", name: "order_status", ok: true }]);
    expect(JSON.stringify(client.messages)).not.toContain("internal_note");
  }, 60_000);

  it.each([
    ["a receiver that never answers", () => "hang" as const, 300, /did not answer|timed out/],
    ["a 500", () => ({ status: 500, body: "boom" }), undefined, /500/],
    ["an answer that is not a JSON object", () => ({ status: 200, body: "<html>ok</html>" }), undefined, /JSON object/],
  ])("tells the caller truthfully when the tool fails: %s", async (_name, answer, timeoutMs, told) => {
    modelArguments = { order_id: "A123" };
    const { said, toolCalls } = await callWithTool(answer, timeoutMs);
    expect(toolCalls).toHaveLength(1);
    expect(toolCalls[0]).toMatchObject({ name: "order_status", ok: false });
    expect(toolCalls[0].error).toMatch(told);
    expect(said).toBe(FAILURE_REPLY);
    expect(JSON.stringify(toolCalls)).not.toContain(API_TOKEN);
  }, 60_000);

  it("does not follow a redirect: the other address is never reached", async () => {
    modelArguments = { order_id: "A123" };
    const { toolCalls, said } = await callWithTool(() => ({ status: 302, headers: { location: elsewhere.url } }));
    expect(toolCalls[0]).toMatchObject({ ok: false });
    expect(toolCalls[0].error).toMatch(/redirect/);
    expect(said).toMatch(/^Sorry/);
    expect(elsewhere.received).toHaveLength(0);
  }, 60_000);

  it("sends nothing when the model's arguments do not fit the tool's parameters", async () => {
    const before = orders.received.length;
    modelArguments = { order_id: 5, extra: true };
    const { toolCalls, said } = await callWithTool(() => ({ status: 200, body: "{}" }));
    expect(toolCalls[0]).toMatchObject({ name: "order_status", ok: false });
    expect(toolCalls[0].error).toMatch(/order_id|extra/);
    expect(said).toMatch(/^Sorry/);
    expect(orders.received.length).toBe(before);
  }, 60_000);
});

// The same tool through a rules agent's intent: no model, the caller's words (the speech
// stand-in "hears" them, so the test is about the dialogue, not the recognizer) lead the agent
// to ask for the order number and call the tool with it.
describe("a custom HTTP tool through a rules agent's intent", () => {
  let rulesStandins: StandinServer;
  let rulesApp: TestApp;
  let rulesAcct: TestAccount;
  const callerSays = ["where is my order", "it is a one two three"];

  beforeAll(async () => {
    rulesStandins = await startStandinServer({ asrFinalMs: 50, llmFirstTokenMs: 50, llmTokenMs: 5, ttsFirstByteMs: 50 }, 0, {
      asrTranscript: ({ index }) => callerSays[index - 1] ?? "goodbye",
    });
    rulesApp = await startTestApp({}, standinProviders(rulesStandins.url));
    rulesAcct = await rulesApp.account({ credits: 100 });
    for (const [name, value] of [
      ["ORDERS_SIGNING", SIGNING_SECRET],
      ["ORDERS_TOKEN", API_TOKEN],
    ]) {
      expect((await rulesApp.request("POST", "/v1/secrets", { key: rulesAcct.key, body: { name, value } })).status).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    await rulesApp?.close();
    await rulesStandins?.close();
  });

  it("asks for the order number, calls the tool signed, and says the answer", async () => {
    const before = orders.received.length;
    orders.answer(() => ({ status: 200, body: JSON.stringify({ status: "out for delivery" }) }));
    const agent = await rulesApp.request("POST", "/v1/agents", {
      key: rulesAcct.key,
      body: {
        name: "Orders",
        system_prompt: "You tell customers where their orders are.",
        voice_id: "openai-alloy",
        first_message: GREETING,
        tools: [orderStatusTool()],
        intents: [{ examples: ["where is my order", "track my order"], tool: "order_status", slots: [{ name: "order_id", question: "What is your order number?" }], reply: "Your order {{order_id}} is {{status}}." }],
      },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const client = await scriptedCall(rulesApp.baseUrl, rulesAcct.key, agent.body.id, LINE, callerSays.length);
    expect(agentLines(client)).toEqual([GREETING, "What is your order number?", expect.stringMatching(/^Your order 123 is out for delivery\./)]);
    const [request] = orders.received.slice(before);
    expect(request!.body).toMatchObject({ tool: "order_status", arguments: { order_id: "123" } });
    expect(verifyParleySignature(request!.headers["x-parley-signature"] as string, request!.rawBody, SIGNING_SECRET)).toBe(true);
    expect(request!.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
  }, 60_000);
});
