import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { anthropicDefinition } from "../../../../../engine/providers/llm/anthropic/index.js";
import { AnthropicDialogueProvider, type AnthropicDialogueConfig } from "../../../../../engine/providers/llm/anthropic/anthropic-dialogue-provider.js";
import { AnthropicError } from "../../../../../engine/providers/llm/anthropic/anthropic-error.js";
import { CALL_CONNECTED } from "../../../../../engine/providers/llm/anthropic/anthropic-messages.js";
import type { AnthropicMessagesRequest } from "../../../../../engine/providers/llm/anthropic/messages-wire.js";
import type { DialogueEvent, DialogueSession } from "../../../../../engine/providers/llm/dialogue-provider.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";
import { DEFAULT_RETRY_POLICY } from "../../../../../engine/providers/provider-retry.js";
import type { ToolDefinition } from "../../../../../engine/tools.js";
import type { AgentSettings } from "../../../../../engine/types.js";
import { recordingTools, say, spoken, testAgent } from "../../../../helpers/dialogue.js";
import {
  anthropicMessagesStandin,
  DEFAULT_ANTHROPIC_REPLY,
  type AnthropicMessagesStandin,
  type AnthropicStandinOptions,
  type AnthropicStandinReply,
} from "../../../../../scripts/standins/anthropic-messages-standin.js";

const NOW = new Date("2025-03-01T10:00:00Z");
const MODELS = { "llm-large": "claude-big", "llm-small": "claude-small", "llm-alt": "claude-alt" };
const NO_WAIT = { delaysMs: [0, 0], maxRetryAfterMs: 2000 };
const KEY = "sk-ant-test-secret-key";
const BOOKING = { customer_name: "Jane Doe", date: "2025-03-04", time: "15:00", service: "cleaning" };
const TOOL_DEFINITIONS: ToolDefinition[] = ["book_appointment", "transfer_call", "end_call"].map((name) => ({
  name,
  description: `The ${name} tool.`,
  parameters: { type: "object", properties: {}, additionalProperties: true },
}));

interface Peer {
  url: string;
  standin: AnthropicMessagesStandin;
  /** Responses whose connection closed before the stand-in finished them. */
  cutOff: number;
  close(): Promise<void>;
}

const running: Peer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.close()));
});

/** The stand-in on a real HTTP server on 127.0.0.1, port 0, requiring KEY. */
async function startStandin(options: AnthropicStandinOptions = {}): Promise<Peer> {
  const standin = anthropicMessagesStandin({ apiKey: KEY, ...options });
  const server = http.createServer((req, res) => {
    res.on("close", () => {
      if (!res.writableFinished) peer.cutOff++;
    });
    if (!standin.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const peer: Peer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    standin,
    cutOff: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  running.push(peer);
  return peer;
}

let tools = recordingTools();

function open(peer: Peer, settings: AgentSettings = testAgent(), config: Partial<AnthropicDialogueConfig> = {}): DialogueSession {
  const provider = new AnthropicDialogueProvider({ url: peer.url, apiKey: KEY, models: MODELS, now: () => NOW, retry: NO_WAIT, ...config });
  tools = recordingTools();
  return provider.open({ agent: settings, context: {}, tools: { definitions: TOOL_DEFINITIONS, execute: tools.execute } });
}

/** Answers with `replies` in turn (the last one again after that). */
function inTurn(...replies: AnthropicStandinReply[]): () => AnthropicStandinReply {
  let next = 0;
  return () => replies[Math.min(next++, replies.length - 1)]!;
}

const failure = (session: DialogueSession, text = "hello") => say(session, text).catch((e: unknown) => e);

describe("anthropic dialogue provider", () => {
  it("is defined for the registry as anthropic, a remote dialogue provider with Claude defaults", () => {
    expect(anthropicDefinition).toMatchObject({ name: "anthropic", stage: "dialogue", remote: true });
    expect(anthropicDefinition.settings.parse({})).toEqual({
      url: "https://api.anthropic.com",
      apiKey: "",
      modelLarge: "claude-sonnet-4-5",
      modelSmall: "claude-haiku-4-5",
      modelAlt: "claude-haiku-4-5",
      requestTimeoutMs: 10_000,
    });
    expect(anthropicDefinition.create(anthropicDefinition.settings.parse({}), { retry: DEFAULT_RETRY_POLICY, embedded: {} }).name).toBe("anthropic");
  });

  it("streams a turn in text deltas, sending the Messages API's path, headers and body", async () => {
    const peer = await startStandin();
    const settings = testAgent({ model: "llm-large", temperature: 0.3, maxTokens: 90, firstMessage: "Hello, this is Ava. How can I help?" });
    const session = open(peer, settings);
    const events = await say(session, "I need a cleaning.");
    expect(events.length).toBeGreaterThan(3);
    expect(events.every((e) => e.type === "text")).toBe(true);
    expect(spoken(events)).toBe(DEFAULT_ANTHROPIC_REPLY);
    await say(session, "Tuesday, please.");

    const headers = peer.standin.headers()[0]!;
    expect(headers).toMatchObject({ "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" });
    const [first, second] = peer.standin.requests() as [AnthropicMessagesRequest, AnthropicMessagesRequest];
    expect(first).toMatchObject({ model: "claude-big", max_tokens: 90, temperature: 0.3, stream: true });
    expect(first.system).toContain("You book dental appointments for Bright Smile Dental.");
    expect(first.system).toContain("2025-03-01");
    expect(first.tools).toEqual(TOOL_DEFINITIONS.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })));
    // The greeting is the agent's first message, after a placeholder user turn (Anthropic wants the user first).
    expect(first.messages).toEqual([
      { role: "user", content: [{ type: "text", text: CALL_CONNECTED }] },
      { role: "assistant", content: [{ type: "text", text: "Hello, this is Ava. How can I help?" }] },
      { role: "user", content: [{ type: "text", text: "I need a cleaning." }] },
    ]);
    expect(second.messages.slice(3)).toEqual([
      { role: "assistant", content: [{ type: "text", text: DEFAULT_ANTHROPIC_REPLY }] },
      { role: "user", content: [{ type: "text", text: "Tuesday, please." }] },
    ]);
  });

  it("keeps Anthropic's temperature range and sends a model name it has no mapping for as it is", async () => {
    const peer = await startStandin();
    await say(open(peer, testAgent({ model: "claude-opus-4-1", temperature: 1.6 })), "hello");
    expect(peer.standin.requests()[0]).toMatchObject({ model: "claude-opus-4-1", temperature: 1 });
  });

  it("books through the executor on a tool_use turn, sends the tool_result back and speaks the confirmation", async () => {
    const confirmation = "You're booked for Tuesday at three. Anything else?";
    const peer = await startStandin({ reply: inTurn({ text: "One moment.", toolUses: [{ name: "book_appointment", input: BOOKING }] }, { text: confirmation }) });
    const session = open(peer);
    const events = await say(session, "Yes, book it.");
    expect(tools.calls).toEqual([{ name: "book_appointment", arguments: BOOKING }]);
    expect(spoken(events)).toBe(`One moment. ${confirmation}`);

    const second = peer.standin.requests()[1]!;
    const [call, result] = second.messages.slice(-2);
    expect(call).toMatchObject({ role: "assistant", content: [{ type: "text", text: "One moment." }, { type: "tool_use", name: "book_appointment", input: BOOKING }] });
    const use = call!.content[1] as { id: string };
    expect(result).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: JSON.stringify({ status: "booked" }) }] });

    // The next turn's request still pairs the tool_use with its result (the stand-in refuses it otherwise).
    session.truncateLastReply("One moment. You're booked");
    expect(spoken(await say(session, "Thanks."))).toBe(confirmation);
    expect(peer.standin.requests()[2]!.messages.at(-2)).toEqual({ role: "assistant", content: [{ type: "text", text: "You're booked" }] });
  });

  it("yields transfer and end_call from their tools as the OpenAI provider does", async () => {
    const transferring = await startStandin({ reply: inTurn({ toolUses: [{ name: "transfer_call", input: {} }] }) });
    const settings = testAgent({ transferEnabled: true, transferNumber: "+15550001111" });
    expect(await say(open(transferring, settings), "A person, please.")).toEqual([{ type: "text", text: settings.transferMessage }, { type: "transfer" }]);

    const ending = await startStandin({ reply: inTurn({ text: "Goodbye!", toolUses: [{ name: "end_call", input: { reason: "caller_goodbye" } }] }) });
    const events = await say(open(ending), "Bye.");
    expect(events.at(-1)).toEqual({ type: "end_call", reason: "caller_goodbye" });
    expect(ending.standin.requests()).toHaveLength(1);
  });

  it("answers a tool call left without a result when the turn was given up, so the next request is accepted", async () => {
    const peer = await startStandin({ reply: inTurn({ toolUses: [{ name: "book_appointment", input: BOOKING }] }, { text: "Okay." }) });
    const provider = new AnthropicDialogueProvider({ url: peer.url, apiKey: KEY, models: MODELS, now: () => NOW, retry: NO_WAIT });
    const abort = new AbortController();
    // The tool's run is where the caller barges in.
    const hanging = { definitions: TOOL_DEFINITIONS, execute: () => (abort.abort(), Promise.resolve({ ok: true as const, data: { status: "booked" } })) };
    const session = provider.open({ agent: testAgent(), context: {}, tools: hanging });
    expect(await say(session, "Book it.", abort.signal)).toEqual([]);
    expect(spoken(await say(session, "Hello?"))).toBe("Okay.");
    const last = peer.standin.requests()[1]!.messages.at(-1)!;
    expect(last.content[0]).toMatchObject({ type: "tool_result" });
    expect(last.content[1]).toEqual({ type: "text", text: "Hello?" });
  });

  it("retries a 429 after its Retry-After, then streams the reply", async () => {
    const peer = await startStandin({ reply: inTurn({ error: { status: 429, type: "rate_limit_error", message: "Number of requests has exceeded your rate limit", retryAfter: "1" } }, { text: "Hi there." }) });
    expect(spoken(await say(open(peer), "hello"))).toBe("Hi there.");
    expect(peer.standin.requests()).toHaveLength(2);
  });

  it("does not wait for a Retry-After longer than a caller can, and says how long it was", async () => {
    const peer = await startStandin({ reply: () => ({ error: { status: 429, type: "rate_limit_error", message: "slow down", retryAfter: "60" } }) });
    expect(await failure(open(peer))).toMatchObject({ status: 429, retryable: true, retryAfterMs: 60_000 });
    expect(peer.standin.requests()).toHaveLength(1);
  });

  it("retries a 5xx and a 529 overloaded, then streams the reply", async () => {
    const peer = await startStandin({
      reply: inTurn({ error: { status: 500, type: "api_error", message: "Internal server error" } }, { error: { status: 529, type: "overloaded_error", message: "Overloaded" } }, { text: "Hi there." }),
    });
    expect(spoken(await say(open(peer), "hello"))).toBe("Hi there.");
    expect(peer.standin.requests()).toHaveLength(3);
  });

  it("retries an error event sent mid-stream before any text", async () => {
    const peer = await startStandin({ reply: inTurn({ streamError: { type: "overloaded_error", message: "Overloaded" } }, { text: "Hi there." }) });
    expect(spoken(await say(open(peer), "hello"))).toBe("Hi there.");
    expect(peer.standin.requests()).toHaveLength(2);
  });

  it("surfaces an error event that keeps coming as a retryable AnthropicError, and a request error in the stream as not retryable", async () => {
    const overloaded = await startStandin({ reply: () => ({ streamError: { type: "overloaded_error", message: "Overloaded" } }) });
    expect(await failure(open(overloaded))).toMatchObject({ code: "stream_error", retryable: true, stage: "dialogue", provider: "anthropic" });
    expect(overloaded.standin.requests()).toHaveLength(3);
    const refused = await startStandin({ reply: () => ({ streamError: { type: "invalid_request_error", message: "bad" } }) });
    expect(await failure(open(refused))).toMatchObject({ code: "stream_error", retryable: false });
    expect(refused.standin.requests()).toHaveLength(1);
  });

  it("does not retry a 400 or a 401, and fails with a non-retryable ProviderError without the key", async () => {
    const bad = await startStandin({ reply: () => ({ error: { status: 400, type: "invalid_request_error", message: `max_tokens too large for key ${KEY}` } }) });
    const badError = await failure(open(bad));
    expect(badError).toBeInstanceOf(AnthropicError);
    expect(badError).toBeInstanceOf(ProviderError);
    expect(badError).toMatchObject({ status: 400, retryable: false, code: "http_status" });
    expect((badError as Error).message).toContain("invalid_request_error");
    expect((badError as Error).message).not.toContain(KEY);
    expect(bad.standin.requests()).toHaveLength(1);

    const peer = await startStandin();
    const wrongKey = `${KEY}-wrong`;
    const refused = await failure(open(peer, testAgent(), { apiKey: wrongKey }));
    expect(refused).toMatchObject({ status: 401, retryable: false });
    expect((refused as Error).message).not.toContain(wrongKey);
    expect(JSON.stringify(refused)).not.toContain(wrongKey);
    expect(peer.standin.headers()).toHaveLength(1);
  });

  it("gives up on a stalled stream (headers, then nothing) with a retryable timeout", async () => {
    const peer = await startStandin({ reply: () => ({ stall: true }) });
    const error = await failure(open(peer, testAgent(), { requestTimeoutMs: 300 }));
    expect(error).toMatchObject({ code: "timeout", retryable: true, status: null });
    expect(peer.standin.requests()).toHaveLength(3);
  });

  it("gives up on a stream that stalls after its first words with a timeout", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Sure," } })}\n\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    running.push({ url: "", standin: anthropicMessagesStandin(), cutOff: 0, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) });
    const session = open({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } as Peer, testAgent(), { requestTimeoutMs: 300 });
    const events: DialogueEvent[] = [];
    const error = await (async () => {
      for await (const event of session.respond("hello", new AbortController().signal)) events.push(event);
    })().catch((e: unknown) => e);
    expect(events).toEqual([{ type: "text", text: "Sure," }]);
    expect(error).toMatchObject({ code: "timeout", retryable: true });
  });

  it("does not cut off a reply that streams for longer than requestTimeoutMs while its bytes come in time", async () => {
    const text = "one two three four five six seven eight";
    const peer = await startStandin({ tokenIntervalMs: 60, reply: () => ({ text }) });
    expect(spoken(await say(open(peer, testAgent(), { requestTimeoutMs: 300 }), "hello"))).toBe(text);
  });

  it("closes the connection when the consumer stops reading without aborting", async () => {
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const peer = await startStandin({ tokenIntervalMs: 250, reply: () => ({ text }) });
    const events: DialogueEvent[] = [];
    for await (const event of open(peer).respond("hello", new AbortController().signal)) {
      events.push(event);
      if (events.length === 2) break;
    }
    await expect.poll(() => peer.cutOff).toBe(1);
  });

  it("fails a malformed event with an AnthropicError, not a TypeError", async () => {
    const peer = await startStandin({ reply: () => ({ malformed: true }) });
    const error = await failure(open(peer));
    expect(error).toBeInstanceOf(AnthropicError);
    expect(error).toMatchObject({ code: "invalid_response", retryable: false });
  });

  it("stops at once when aborted mid-stream and closes the connection", async () => {
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const peer = await startStandin({ tokenIntervalMs: 250, reply: inTurn({ text }, { text: "Okay." }) });
    const session = open(peer);
    const abort = new AbortController();
    const events: DialogueEvent[] = [];
    for await (const event of session.respond("hello", abort.signal)) {
      events.push(event);
      if (events.length === 2) abort.abort();
    }
    expect(events).toHaveLength(2);
    await expect.poll(() => peer.cutOff).toBe(1);
    await say(session, "sorry, go on");
    expect(peer.standin.requests()[1]!.messages.slice(0, 2)).toEqual([
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "assistant", content: [{ type: "text", text: "word0 word1" }] },
    ]);
  });

  it("never shows the key: not in the provider, not in a network error", async () => {
    const provider = new AnthropicDialogueProvider({ url: "http://127.0.0.1:1", apiKey: KEY, models: MODELS, retry: NO_WAIT });
    expect(JSON.stringify(provider)).not.toContain(KEY);
    const error = await failure(provider.open({ agent: testAgent(), context: {}, tools: { definitions: [], execute: tools.execute } }));
    expect(error).toMatchObject({ code: "network", retryable: true });
    expect(String((error as Error).message)).not.toContain(KEY);
  });
});
