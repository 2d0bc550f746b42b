import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import type { ChatRequest, StandinReply } from "../../scripts/standins/openai-chat-standin.js";
import { agentLines, scriptedCall, startStandinApp } from "../helpers/standin-call.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";
import { untilValue } from "../helpers/until.js";

// Issue 31: a call passed from one agent to another on the same line, through an
// OpenAI-compatible model's handoff tool and through a rules agent's hand-off intent. The
// speech stand-ins "hear" scripted words and speak synthetic sound: the test is about the
// hand-off (voice, prompt, transcript), not recognition, so it runs in the "other" lane.

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");
/** What the caller sends: one second of speech (the stand-in recognizer hears the scripted words in any). */
const LINE = parseWav(readFileSync(path.join(FIXTURES, "opening-hours.16k.wav"))).samples.subarray(4000, 20000);
const FRONT_PROMPT = "You are the front desk of Acme Energy.";
const BILLING_PROMPT = "You answer billing questions for Acme Energy.";

/** Creates an agent, expecting 201; its id. */
async function createAgent(app: TestApp, acct: TestAccount, body: Record<string, unknown>): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: acct.key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** The call the client had, once its end is stored, as the API shows it with its transcript and tool calls. */
function storedCall(app: TestApp, acct: TestAccount, callId: string) {
  return untilValue(`call ${callId} stored as ended`, async () => {
    const res = await app.request("GET", `/v1/calls/${callId}?include=transcript,tool_calls`, { key: acct.key });
    return res.status === 200 && res.body.status === "completed" && res.body;
  });
}

describe("a hand-off decided by a chat model", () => {
  let world: Awaited<ReturnType<typeof startStandinApp>>;
  let app: TestApp;
  let acct: TestAccount;
  const chatRequests: ChatRequest[] = [];
  let billingId = "";

  /** The front desk passes every caller to billing; billing answers from its own prompt. */
  function modelReply(request: ChatRequest): StandinReply {
    if (request.response_format) return { text: "{}" };
    chatRequests.push(request);
    const system = String(request.messages[0]?.content ?? "");
    if (system.includes(BILLING_PROMPT)) return { text: "I can see the double charge and will refund it." };
    return { text: "Let me pass you to billing.", toolCalls: [{ name: "handoff", arguments: { agent_id: billingId } }] };
  }

  beforeAll(async () => {
    world = await startStandinApp({ chatReply: modelReply, callerSays: () => ["i was charged twice", "can you fix it"] });
    ({ app, acct } = world);
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it("passes the caller on: the new agent's voice, prompt and first message, the conversation so far in its context, one transcript", async () => {
    billingId = await createAgent(app, acct, { name: "Bill", system_prompt: BILLING_PROMPT, voice_id: "openai-nova", first_message: "Billing desk, hello." });
    const frontId = await createAgent(app, acct, {
      name: "Fran",
      system_prompt: FRONT_PROMPT,
      voice_id: "openai-alloy",
      first_message: "Front desk, hello.",
      handoffs: [{ agent_id: billingId, description: "questions about bills, charges and refunds" }],
    });
    const client = await scriptedCall(app.baseUrl, acct.key, frontId, LINE, 2);

    expect(agentLines(client)).toEqual(["Front desk, hello.", "Let me pass you to billing.", "Billing desk, hello.", "I can see the double charge and will refund it."]);
    const handoff = client.messages.find((m) => m.message.type === "handoff")?.message;
    expect(handoff).toEqual({ type: "handoff", from_agent_id: frontId, to_agent_id: billingId, to_agent_name: "Bill" });

    // Each line in its agent's voice.
    const voices = new Map(world.standins.speechRequests().map((r) => [r.input, r.voice]));
    expect(["Front desk, hello.", "Let me pass you to billing.", "Billing desk, hello.", "I can see the double charge and will refund it."].map((line) => voices.get(line))).toEqual(["alloy", "alloy", "nova", "nova"]);

    // The front desk was offered the hand-off; billing got its own prompt and the conversation so far.
    const [front, billing] = chatRequests.slice(-2);
    expect(front!.tools?.map((t) => t.function.name)).toContain("handoff");
    expect(String(billing!.messages[0]!.content)).toContain(BILLING_PROMPT);
    expect(String(billing!.messages[0]!.content)).not.toContain(FRONT_PROMPT);
    expect(billing!.messages.slice(1).map((m) => m.content)).toEqual(["Front desk, hello.", "i was charged twice", "Let me pass you to billing.", "Billing desk, hello.", "can you fix it"]);
    expect(billing!.tools?.map((t) => t.function.name) ?? []).not.toContain("handoff");

    // The stored call: still the first agent's, one transcript with the new agent's lines marked, the hand-off among its tool calls.
    const callId = client.messages.find((m) => m.message.type === "connected")!.message.call_id as string;
    const call = await storedCall(app, acct, callId);
    expect(call.agent_id).toBe(frontId);
    expect(call.transcript.map((s: { role: string; content: string; agent_id?: string }) => [s.role, s.content, s.agent_id ?? null])).toEqual([
      ["agent", "Front desk, hello.", null],
      ["user", "i was charged twice", null],
      ["agent", "Let me pass you to billing.", null],
      ["agent", "Billing desk, hello.", billingId],
      ["user", "can you fix it", null],
      ["agent", "I can see the double charge and will refund it.", billingId],
    ]);
    expect(call.tool_calls).toEqual([{ name: "handoff", arguments: { agent_id: billingId }, ok: true, data: { status: "handing_off", agent_name: "Bill", agent_id: billingId }, error: null }]);
    // Nothing of the other agent's settings is kept in the call's record.
    expect(JSON.stringify(call)).not.toContain(BILLING_PROMPT);
  }, 60_000);
});

describe("a hand-off through a rules agent's intent", () => {
  let world: Awaited<ReturnType<typeof startStandinApp>>;
  let app: TestApp;
  let acct: TestAccount;

  beforeAll(async () => {
    world = await startStandinApp({ callerSays: () => ["i have a question about my bill", "why was i charged twice"] });
    ({ app, acct } = world);
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it("says the intent's reply, then the billing agent answers from its own FAQ in its own voice", async () => {
    const billingId = await createAgent(app, acct, {
      name: "Bill",
      system_prompt: BILLING_PROMPT,
      voice_id: "openai-nova",
      first_message: "Billing desk, how can I help?",
      metadata: { business_name: "Acme Energy", faq: [{ question: "Why was I charged twice?", answer: "A second charge is a hold that drops off within three days." }] },
    });
    const frontId = await createAgent(app, acct, {
      name: "Fran",
      system_prompt: FRONT_PROMPT,
      voice_id: "openai-alloy",
      first_message: "Front desk, hello.",
      handoffs: [{ agent_id: billingId, description: "billing questions" }],
      intents: [{ examples: ["i have a question about my bill", "billing"], handoff_to: billingId, reply: "Let me pass you to billing." }],
    });
    const client = await scriptedCall(app.baseUrl, acct.key, frontId, LINE, 2);

    const lines = agentLines(client);
    expect(lines.slice(0, 3)).toEqual(["Front desk, hello.", "Let me pass you to billing.", "Billing desk, how can I help?"]);
    expect(lines[3]).toMatch(/^A second charge is a hold that drops off within three days\./);
    const voices = new Map(world.standins.speechRequests().map((r) => [r.input, r.voice]));
    expect(voices.get("Let me pass you to billing.")).toBe("alloy");
    expect(voices.get("Billing desk, how can I help?")).toBe("nova");
    const callId = client.messages.find((m) => m.message.type === "connected")!.message.call_id as string;
    const call = await storedCall(app, acct, callId);
    expect(call.tool_calls).toEqual([expect.objectContaining({ name: "handoff", arguments: { agent_id: billingId }, ok: true })]);
  }, 60_000);
});
