import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import { anthropicMessagesStandin, DEFAULT_ANTHROPIC_REPLY, type AnthropicMessagesStandin } from "../../scripts/standins/anthropic-messages-standin.js";
import { DEFAULT_STANDIN_REPLY } from "../../scripts/standins/openai-chat-standin.js";
import { startStandinServer, type StandinServer } from "../../scripts/standins/standin-server.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { scrapeMetrics } from "../helpers/prometheus-text.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// A dialogue chain: an OpenAI-compatible chat service that answers every conversation request
// 503, then Anthropic's Messages API, each a local stand-in of its wire protocol.

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");
const GREETING = "Hello, thanks for calling Acme Dental.";
const ANTHROPIC_KEY = "sk-ant-fallback-test-key";

let standins: StandinServer;
let anthropic: AnthropicMessagesStandin;
let anthropicServer: http.Server;
let app: TestApp;
let acct: TestAccount;
/** Conversation requests the failing chat service was sent. */
let chatRequests = 0;

beforeAll(async () => {
  standins = await startStandinServer({ asrFinalMs: 50, llmFirstTokenMs: 50, llmTokenMs: 5, ttsFirstByteMs: 50 }, 0, {
    // Post-call analyses (structured output) are answered: only the conversation fails.
    chatReply: (request) => (request.response_format ? { text: DEFAULT_STANDIN_REPLY } : (chatRequests++, { error: { status: 503, message: "The server is overloaded." } })),
  });
  anthropic = anthropicMessagesStandin({ apiKey: ANTHROPIC_KEY });
  anthropicServer = http.createServer((req, res) => {
    if (!anthropic.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => anthropicServer.listen(0, "127.0.0.1", resolve));
  app = await startTestApp(
    {},
    {
      PARLEY_ENGINE: "1",
      PARLEY_ASR_PROVIDER: "deepgram",
      PARLEY_ASR_URL: standins.url,
      PARLEY_LLM_PROVIDER: "openai",
      PARLEY_LLM_URL: standins.url,
      PARLEY_LLM_FALLBACK_PROVIDER: "anthropic",
      PARLEY_LLM_FALLBACK_URL: `http://127.0.0.1:${(anthropicServer.address() as AddressInfo).port}`,
      PARLEY_LLM_FALLBACK_API_KEY: ANTHROPIC_KEY,
      PARLEY_TTS_PROVIDER: "openai",
      PARLEY_TTS_URL: standins.url,
    },
  );
  acct = await app.account({ credits: 100 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await standins?.close();
  anthropicServer?.closeAllConnections();
  await new Promise((resolve) => anthropicServer?.close(resolve));
});

describe("a dialogue chain whose first provider fails every request", () => {
  it("has the second answer each turn while the call goes on; the switch is counted once, then the first is passed over", async () => {
    const before = await scrapeMetrics(app.baseUrl);
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Chained", system_prompt: "You answer calls for Acme Dental.", voice_id: "openai-alloy", first_message: GREETING },
    });
    expect(agent.status).toBe(201);
    const client = await NativeMediaClient.connect(`${app.baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agent.body.id}&sample_rate=16000`, acct.key, 16000);
    client.startStreaming();
    await client.waitForAgentSilence(900, 0, 15_000);
    const question = parseWav(readFileSync(path.join(FIXTURES, "opening-hours.16k.wav"))).samples;
    for (let i = 0; i < 2; i++) {
      const saidAt = await client.say(question);
      await client.waitForAgentSilence(900, saidAt, 15_000);
    }
    client.hangUp();
    await client.closed;

    const transcript = client.messages.filter((m) => m.message.type === "transcript").map((m) => `${m.message.role}: ${m.message.content}`);
    expect(transcript).toEqual([`agent: ${GREETING}`, "user: stand in utterance 1", `agent: ${DEFAULT_ANTHROPIC_REPLY}`, "user: stand in utterance 2", `agent: ${DEFAULT_ANTHROPIC_REPLY}`]);
    // The first turn: the chat service's request and its two retries, then Anthropic. The second
    // turn goes to Anthropic at once (the failed provider cools down for 30 s).
    expect(chatRequests).toBe(3);
    const sent = anthropic.requests();
    expect(sent).toHaveLength(2);
    // Anthropic's second request carries the first turn: the conversation is one.
    const second = sent[1]!.messages.map((m) => (typeof m.content === "string" ? m.content : m.content.map((b) => ("text" in b ? b.text : "")).join("")));
    expect(second.join(" | ")).toContain(DEFAULT_ANTHROPIC_REPLY);
    expect(second.filter((text) => text.includes("stand in utterance"))).toHaveLength(2);

    const after = await scrapeMetrics(app.baseUrl);
    const switched = { stage: "dialogue", from: "openai", to: "anthropic", reason: "error" };
    expect(after.value("parley_provider_switches_total", switched) - before.value("parley_provider_switches_total", switched)).toBe(1);
    // Each provider's requests, measured: the failed turn (its retries inside it), then two answers.
    const requests = (provider: string, outcome: string) => after.value("parley_provider_requests_total", { stage: "dialogue", provider, outcome }) - before.value("parley_provider_requests_total", { stage: "dialogue", provider, outcome });
    expect([requests("openai", "server_error"), requests("anthropic", "ok")]).toEqual([1, 2]);
    // The call saw no provider error: the chain hid it.
    for (const recovered of ["true", "false"]) {
      const labels = { stage: "dialogue", provider: "openai", recovered };
      expect(after.value("parley_provider_errors_total", labels)).toBe(before.value("parley_provider_errors_total", labels));
    }
    const calls = await app.request("GET", `/v1/calls?agent_id=${agent.body.id}&limit=1`, { key: acct.key });
    expect(["in_progress", "completed"]).toContain(calls.body.data[0].status);
  }, 60_000);
});
