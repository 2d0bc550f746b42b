import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import { REPLY_FALLBACK_LINE } from "../../engine/call-session.js";
import { DEFAULT_STANDIN_REPLY, type ChatRequest, type StandinReply } from "../../scripts/standins/openai-chat-standin.js";
import { startStandinServer, type StandinServer } from "../../scripts/standins/standin-server.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { standinProviders } from "../helpers/standin-call.js";
import { scrapeMetrics } from "../helpers/prometheus-text.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// The service configured for remote providers (Deepgram-style ASR, OpenAI-style chat and
// speech), each answered by a local stand-in speaking that provider's wire protocol.

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");
const GREETING = "Hello, thanks for calling Acme Dental.";

let standins: StandinServer;
let app: TestApp;
let acct: TestAccount;
/**
 * Conversation requests still to be answered 503, as an overloaded service does. The post-call
 * analyses (structured output) are left alone: the previous test's may come at any moment.
 */
let chatFailures = 0;
/** When set, the chat model's answer (a test that scripts tool calls). */
let scriptedReply: ((request: ChatRequest) => StandinReply) | null = null;

beforeAll(async () => {
  standins = await startStandinServer({ asrFinalMs: 50, llmFirstTokenMs: 50, llmTokenMs: 5, ttsFirstByteMs: 50 }, 0, {
    chatReply: (request) => {
      if (scriptedReply) return scriptedReply(request);
      return !request.response_format && chatFailures-- > 0 ? { error: { status: 503, message: "The server is overloaded." } } : { text: DEFAULT_STANDIN_REPLY };
    },
  });
  app = await startTestApp({}, standinProviders(standins.url, { chat: true }));
  acct = await app.account({ credits: 100 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await standins?.close();
});

describe("remote providers", () => {
  it("offer the speech service's voices next to Flite's", async () => {
    const voices = await app.request("GET", "/v1/voices", { key: acct.key });
    const ids = (voices.body.data as Array<{ id: string }>).map((v) => v.id);
    expect(ids).toContain("openai-alloy");
    expect(ids).toContain("flite-slt");
  });

  it("answer a call: the stand-in transcript reaches the chat model and its reply is spoken by the speech service", async () => {
    const { agentId, transcript, greetingSamples, reply } = await callAndSay(1);
    expect(transcript).toEqual([`agent: ${GREETING}`, "user: stand in utterance 1", `agent: ${DEFAULT_STANDIN_REPLY}`]);
    // The stand-in speaks 65 ms of audio per character: the reply's audio has that length (16 kHz here).
    const expectedSamples = (DEFAULT_STANDIN_REPLY.split(/(?<=[.?!])\s+/).join("").length * 65 * 16000) / 1000;
    expect(reply.length).toBeGreaterThan(expectedSamples * 0.9);
    expect(reply.length).toBeLessThan(expectedSamples * 1.1);
    expect(greetingSamples).toBeGreaterThan(((GREETING.length * 65 * 16000) / 1000) * 0.9);
    expect(await storedStatus(agentId)).toBe("completed");
  }, 60_000);

  it("hide a chat service that answers 503 once: the request is sent again and the call goes on as usual", async () => {
    chatFailures = 1;
    const before = await scrapeMetrics(app.baseUrl);
    const { agentId, transcript } = await callAndSay(1);
    expect(transcript).toEqual([`agent: ${GREETING}`, "user: stand in utterance 1", `agent: ${DEFAULT_STANDIN_REPLY}`]);
    expect(chatFailures).toBe(-1);
    expect(await storedStatus(agentId)).toBe("completed");
    // The retry is counted; the call saw no provider error.
    const after = await scrapeMetrics(app.baseUrl);
    const dialogue = { stage: "dialogue", provider: "openai" };
    expect(after.value("parley_provider_retries_total", dialogue) - before.value("parley_provider_retries_total", dialogue)).toBe(1);
    expect(after.value("parley_provider_errors_total", dialogue)).toBe(before.value("parley_provider_errors_total", dialogue));
  }, 60_000);

  it("keep the call when the chat service fails a whole turn: Flite says the fallback line, the next turn is answered", async () => {
    // The first request and both its retries.
    chatFailures = 3;
    const before = await scrapeMetrics(app.baseUrl);
    const { agentId, transcript } = await callAndSay(2);
    expect(transcript).toEqual([
      `agent: ${GREETING}`,
      "user: stand in utterance 1",
      `agent: ${REPLY_FALLBACK_LINE}`,
      "user: stand in utterance 2",
      `agent: ${DEFAULT_STANDIN_REPLY}`,
    ]);
    expect(await storedStatus(agentId)).toBe("completed");
    // Two retries, then one provider error the call recovered from, named by stage and provider.
    const after = await scrapeMetrics(app.baseUrl);
    const dialogue = { stage: "dialogue", provider: "openai" };
    expect(after.value("parley_provider_retries_total", dialogue) - before.value("parley_provider_retries_total", dialogue)).toBe(2);
    const recovered = { ...dialogue, recovered: "true" };
    expect(after.value("parley_provider_errors_total", recovered) - before.value("parley_provider_errors_total", recovered)).toBe(1);
    expect(after.value("parley_provider_errors_total", { ...dialogue, recovered: "false" })).toBe(0);
  }, 60_000);
});

describe("bookings a caller makes", () => {
  it("keep to the API's field limits and to PARLEY_BOOKINGS_PER_CALL (2): the model is told why, nothing more is stored", async () => {
    const date = weekdayAhead();
    const book = (time: string, customer_name = "Ada Lee") => ({ name: "book_appointment", arguments: { customer_name, date, time, service: "cleaning" } });
    const toolAnswers: string[] = [];
    // A caller (or a model talked into it) books four at once, one with a 201-character name.
    scriptedReply = (request) => {
      const last = request.messages.at(-1);
      if (last?.role !== "tool") return { toolCalls: [book("10:00", "A".repeat(201)), book("10:00"), book("11:00"), book("12:00")] };
      toolAnswers.push(...request.messages.filter((m) => m.role === "tool").map((m) => m.content as string));
      return { text: "All done." };
    };
    let agentId: string;
    try {
      ({ agentId } = await callAndSay(1));
    } finally {
      scriptedReply = null;
    }
    await storedStatus(agentId);
    const [call] = (await app.request("GET", `/v1/calls?agent_id=${agentId}&limit=1`, { key: acct.key })).body.data;
    const booked = (await app.request("GET", `/v1/appointments?call_id=${call.id}&order=asc`, { key: acct.key })).body.data;
    expect(booked.map((a: any) => [a.customer_name, a.time])).toEqual([
      ["Ada Lee", "10:00"],
      ["Ada Lee", "11:00"],
    ]);
    expect(toolAnswers).toHaveLength(4);
    expect(toolAnswers[0]).toContain("customer_name must be at most 200 characters");
    expect(toolAnswers[3]).toContain("booked as many appointments as one call may");
  }, 60_000);
});

/** A weekday at least two days ahead (UTC), inside the default booking hours' days. */
function weekdayAhead(): string {
  const today = new Date();
  for (let ahead = 2; ; ahead++) {
    const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + ahead));
    if (day.getUTCDay() >= 1 && day.getUTCDay() <= 5) return day.toISOString().slice(0, 10);
  }
}

/** A call to an agent with a remote voice: after the greeting the caller asks `utterances` times, each time waiting for the answer, then hangs up. */
async function callAndSay(utterances: number) {
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Remote", system_prompt: "You answer calls for Acme Dental.", voice_id: "openai-alloy", first_message: GREETING },
  });
  expect(agent.status).toBe(201);
  const client = await NativeMediaClient.connect(`${app.baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agent.body.id}&sample_rate=16000`, acct.key, 16000);
  client.startStreaming();
  await client.waitForAgentSilence(900, 0, 15_000);
  const greetingSamples = client.audioSince(0).length;
  const question = parseWav(readFileSync(path.join(FIXTURES, "opening-hours.16k.wav"))).samples;
  let reply: Int16Array = new Int16Array(0);
  for (let i = 0; i < utterances; i++) {
    const saidAt = await client.say(question);
    await client.waitForAgentSilence(900, saidAt, 15_000);
    reply = client.audioSince(saidAt);
  }
  client.hangUp();
  await client.closed;
  const transcript = client.messages.filter((m) => m.message.type === "transcript").map((m) => `${m.message.role}: ${m.message.content}`);
  return { agentId: agent.body.id as string, transcript, greetingSamples, reply };
}

/** The status the agent's newest call was stored with once it ended. */
async function storedStatus(agentId: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const calls = await app.request("GET", `/v1/calls?agent_id=${agentId}&limit=1`, { key: acct.key });
    const status: string | undefined = calls.body.data[0]?.status;
    if (status && !["queued", "ringing", "in_progress"].includes(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the call of ${agentId} did not end`);
}
