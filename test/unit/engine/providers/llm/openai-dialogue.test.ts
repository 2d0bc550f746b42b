import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { DialogueEvent, DialogueSession } from "../../../../../engine/providers/llm/dialogue-provider.js";
import { ChatCompletionsError } from "../../../../../engine/providers/llm/openai/chat-completions-error.js";
import type { ChatMessage } from "../../../../../engine/providers/llm/openai/chat-completions-wire.js";
import { OpenAiDialogueProvider, type OpenAiDialogueConfig } from "../../../../../engine/providers/llm/openai/openai-dialogue-provider.js";
import { readServerSentEvents } from "../../../../../engine/providers/llm/server-sent-events.js";
import { ToolCallAssembler } from "../../../../../engine/providers/llm/openai/tool-call-assembler.js";
import type { AgentSettings } from "../../../../../engine/types.js";
import { KNOWLEDGE_SEARCH_TOOL, NO_TOOLS, type ToolDefinition } from "../../../../../engine/tools.js";
import { recordingTools, say, spoken, testAgent } from "../../../../helpers/dialogue.js";
import {
  chatCompletionsStandin,
  DEFAULT_STANDIN_REPLY,
  type ChatCompletionsStandin,
  type ChatRequest,
  type ChatStandinOptions,
  type StandinReply,
} from "../../../../../scripts/standins/openai-chat-standin.js";
import { closedLoopbackPort } from "../../../../helpers/loopback-peers.js";

/** Saturday, March 1, 2025, 10:00 UTC. */
const NOW = new Date("2025-03-01T10:00:00Z");
const MODELS = { "llm-large": "big-model", "llm-small": "small-model", "llm-alt": "alt-model" };
/** Retries as in production, without the waits. */
const NO_WAIT = { delaysMs: [0, 0], maxRetryAfterMs: 2000 };
const BOOKING = { customer_name: "Jane Doe", date: "2025-03-04", time: "15:00", service: "cleaning" };

function agent(overrides: Partial<AgentSettings> = {}): AgentSettings {
  return testAgent({
    temperature: 0.4,
    maxTokens: 120,
    metadata: {
      business_name: "Bright Smile Dental",
      faq: [{ question: "Do you have parking?", answer: "Yes, free parking behind the building." }],
    },
    ...overrides,
  });
}

interface Standin {
  url: string;
  standin: ChatCompletionsStandin;
  /** Responses whose connection closed before the stand-in finished them. */
  cutOff: number;
  close(): Promise<void>;
}

const running: Standin[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** The stand-in on a real HTTP server on 127.0.0.1, port 0. */
async function startStandin(options: Partial<ChatStandinOptions> = {}): Promise<Standin> {
  const standin = chatCompletionsStandin({ firstTokenDelayMs: 0, tokenIntervalMs: 0, ...options });
  const server = http.createServer((req, res) => {
    res.on("close", () => {
      if (!res.writableFinished) peer.cutOff++;
    });
    if (!standin.handle(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const peer: Standin = {
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

/** Tools as the control plane would offer them (their names and shapes are its business). */
const TOOL_DEFINITIONS: ToolDefinition[] = ["book_appointment", "transfer_call", "end_call", "do_not_call"].map((name) => ({
  name,
  description: `The ${name} tool.`,
  parameters: { type: "object", properties: {}, additionalProperties: true },
}));

/** The tools of the session `open` made last. */
let tools = recordingTools();

function open(
  peer: Standin,
  settings: AgentSettings = agent(),
  options: { context?: Record<string, unknown>; config?: Partial<OpenAiDialogueConfig>; tools?: ReturnType<typeof recordingTools> } = {},
): DialogueSession {
  const provider = new OpenAiDialogueProvider({ url: peer.url, models: MODELS, now: () => NOW, retry: NO_WAIT, ...options.config });
  tools = options.tools ?? recordingTools();
  return provider.open({ agent: settings, context: options.context ?? {}, tools: { ...tools, definitions: TOOL_DEFINITIONS, execute: tools.execute } });
}

function lastMessage(request: ChatRequest | undefined): ChatMessage | undefined {
  return request?.messages.at(-1);
}

function toolNames(request: ChatRequest | undefined): string[] {
  return (request?.tools ?? []).map((t) => t.function.name);
}

/** Answers with `first` until a tool result is in the conversation, then with `after`. */
function afterToolResult(first: StandinReply, after: StandinReply): (request: ChatRequest) => StandinReply {
  return (request) => (lastMessage(request)?.role === "tool" ? after : first);
}

describe("openai dialogue provider", () => {
  it("is named openai", () => {
    expect(new OpenAiDialogueProvider({ models: MODELS }).name).toBe("openai");
  });

  it("streams the reply as several text events, in order, that join to the reply", async () => {
    const peer = await startStandin();
    const events = await say(open(peer), "Hi, I'd like to book a cleaning.");
    expect(events.length).toBeGreaterThan(3);
    expect(events.every((e) => e.type === "text")).toBe(true);
    expect(spoken(events)).toBe(DEFAULT_STANDIN_REPLY);
  });

  it("gives the model the keys the caller pressed as a statement in the caller's turn", async () => {
    const peer = await startStandin();
    const session = open(peer);
    const events: DialogueEvent[] = [];
    for await (const event of session.respondToKeys("12#", new AbortController().signal)) events.push(event);
    expect(spoken(events)).toBe(DEFAULT_STANDIN_REPLY);
    expect(lastMessage(peer.standin.requests()[0])).toEqual({ role: "user", content: "(The caller pressed 1 2 # on the phone keypad.)" });
  });

  it("sends the mapped model, the agent's settings, a system prompt with metadata and context, the greeting and the history", async () => {
    const peer = await startStandin();
    const settings = agent({ model: "llm-large", temperature: 0.3, maxTokens: 90, firstMessage: "Hello {{customer_name}}, this is Ava." });
    const session = open(peer, settings, { context: { customer_name: "Jane", caller_number: "+15551234567" } });
    await say(session, "I need a cleaning.");
    await say(session, "Tuesday, please.");

    const [first, second] = peer.standin.requests();
    expect(first).toMatchObject({ model: "big-model", temperature: 0.3, max_tokens: 90, stream: true });
    const system = first!.messages[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain("You book dental appointments for Bright Smile Dental.");
    expect(system.content).toContain("business name: Bright Smile Dental");
    expect(system.content).toContain("Yes, free parking behind the building.");
    expect(system.content).toContain("customer name: Jane");
    expect(system.content).toContain("+15551234567");
    expect(system.content).toContain("2025-03-01");
    expect(first!.messages.slice(1)).toEqual([
      { role: "assistant", content: "Hello Jane, this is Ava." },
      { role: "user", content: "I need a cleaning." },
    ]);
    expect(second!.messages.slice(1)).toEqual([
      { role: "assistant", content: "Hello Jane, this is Ava." },
      { role: "user", content: "I need a cleaning." },
      { role: "assistant", content: DEFAULT_STANDIN_REPLY },
      { role: "user", content: "Tuesday, please." },
    ]);
  });

  it("reports a booking streamed in fragments once, sends the tool result and streams the confirmation", async () => {
    const confirmation = "You're booked for Tuesday at three. Anything else?";
    const peer = await startStandin({ reply: afterToolResult({ toolCalls: [{ name: "book_appointment", arguments: BOOKING }] }, { text: confirmation }) });
    const events = await say(open(peer), "Yes, book it.");

    expect(tools.calls).toEqual([{ name: "book_appointment", arguments: BOOKING }]);
    expect(spoken(events)).toBe(confirmation);

    const requests = peer.standin.requests();
    expect(requests).toHaveLength(2);
    const [call, result] = requests[1]!.messages.slice(-2);
    expect(call).toMatchObject({ role: "assistant", tool_calls: [{ type: "function", function: { name: "book_appointment" } }] });
    const toolCall = call!.role === "assistant" ? call!.tool_calls![0]! : undefined;
    expect(JSON.parse(toolCall!.function.arguments)).toEqual(BOOKING);
    expect(result).toMatchObject({ role: "tool", tool_call_id: toolCall!.id });
    expect(JSON.parse(result!.content as string)).toEqual({ status: "booked" });
  });

  it("separates the text of two rounds, and a barge-in keeps the heard words of each", async () => {
    const peer = await startStandin({
      reply: afterToolResult({ text: "One moment.", toolCalls: [{ name: "book_appointment", arguments: BOOKING }] }, { text: "You're booked for Tuesday at three." }),
    });
    const session = open(peer);
    const events = await say(session, "Yes, book it.");
    expect(spoken(events)).toBe("One moment. You're booked for Tuesday at three.");

    session.truncateLastReply("One moment. You're booked");
    const sent = peer.standin.requests().length;
    await say(session, "Hold on.");
    const messages = peer.standin.requests()[sent]!.messages;
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["One moment.", "You're booked"]);
  });

  it("does not act on a tool call whose arguments are not valid JSON, and tells the model", async () => {
    const peer = await startStandin({
      reply: afterToolResult({ toolCalls: [{ name: "book_appointment", arguments: '{"customer_name": "Jane' }] }, { text: "Sorry, could you repeat that?" }),
    });
    const events = await say(open(peer), "Book it.");
    expect(tools.calls).toEqual([]);
    expect(spoken(events)).toBe("Sorry, could you repeat that?");
    const result = lastMessage(peer.standin.requests()[1]);
    expect(result?.role).toBe("tool");
    expect(JSON.parse(result!.content as string)).toMatchObject({ status: "error" });
  });

  it("gives the model a refused tool's error and data, and lets it say so", async () => {
    const refusal = { ok: false, error: "that time is already taken", data: { alternatives: [{ date: "2025-03-04", time: "15:30" }] } } as const;
    const peer = await startStandin({
      reply: afterToolResult({ toolCalls: [{ name: "book_appointment", arguments: BOOKING }] }, { text: "That time is taken; how about 3:30?" }),
    });
    const events = await say(open(peer, agent(), { tools: recordingTools(() => refusal) }), "Book it.");
    expect(spoken(events)).toBe("That time is taken; how about 3:30?");
    expect(JSON.parse(lastMessage(peer.standin.requests()[1])!.content as string)).toEqual({ status: "error", error: refusal.error, alternatives: refusal.data.alternatives });
  });

  it("stops asking again after three rounds of tool calls", async () => {
    const peer = await startStandin({ reply: () => ({ toolCalls: [{ name: "book_appointment", arguments: BOOKING }] }) });
    const events = await say(open(peer), "Book it.");
    expect(peer.standin.requests()).toHaveLength(3);
    expect(events).toEqual([]);
    expect(tools.calls).toHaveLength(3);
  });

  it("offers the model the tools the control plane gave the call, and none when it gave none", async () => {
    const peer = await startStandin();
    await say(open(peer), "hello");
    const provider = new OpenAiDialogueProvider({ url: peer.url, models: MODELS, now: () => NOW, retry: NO_WAIT });
    await say(provider.open({ agent: agent(), context: {}, tools: NO_TOOLS }), "hello");
    const [offered, none] = peer.standin.requests();
    expect(toolNames(offered)).toEqual(["book_appointment", "transfer_call", "end_call", "do_not_call"]);
    expect(none!.tools).toBeUndefined();
  });

  it("puts the passages the knowledge search finds for the caller's words in the system prompt of that turn, and does not offer the search as a tool", async () => {
    const peer = await startStandin();
    const searched: string[] = [];
    const passages = [{ passage_id: "kbp_1", document_name: "hours.md", text: "On Saturdays we close at noon.", score: 2 }];
    const knowledge = recordingTools((name, args) => {
      if (name === KNOWLEDGE_SEARCH_TOOL) searched.push(String(args.question));
      return name === KNOWLEDGE_SEARCH_TOOL && args.question !== "thanks" ? { ok: true, data: { passages } } : { ok: true, data: { passages: [] } };
    });
    const provider = new OpenAiDialogueProvider({ url: peer.url, models: MODELS, now: () => NOW, retry: NO_WAIT });
    const definitions = [...TOOL_DEFINITIONS, { name: KNOWLEDGE_SEARCH_TOOL, description: "search", parameters: {} }];
    const session = provider.open({ agent: agent(), context: {}, tools: { definitions, execute: knowledge.execute } });
    await say(session, "are you open on saturdays");
    await say(session, "thanks");
    const [first, second] = peer.standin.requests();
    expect(searched).toEqual(["are you open on saturdays", "thanks"]);
    expect(first!.messages[0]).toMatchObject({ role: "system" });
    expect(String(first!.messages[0]!.content)).toContain("[1] (hours.md) On Saturdays we close at noon.");
    expect(toolNames(first)).not.toContain(KNOWLEDGE_SEARCH_TOOL);
    // Each turn its own passages: none found, none in the prompt (and nothing of the last turn's).
    expect(String(second!.messages[0]!.content)).not.toContain("hours.md");
  });

  it("yields transfer after the reply text when the model calls transfer_call", async () => {
    const peer = await startStandin({ reply: () => ({ text: "Let me get someone for you.", toolCalls: [{ name: "transfer_call", arguments: {} }] }) });
    const events = await say(open(peer, agent({ transferEnabled: true, transferNumber: "+15550001111" })), "Can I talk to a person?");
    expect(spoken(events)).toBe("Let me get someone for you.");
    expect(events.at(-1)).toEqual({ type: "transfer" });
    expect(peer.standin.requests()).toHaveLength(1);
  });

  it("yields the hand-off a tool result asks for, after the reply text, and asks the model nothing more", async () => {
    const billing = testAgent({ id: "agent_billing", name: "Bill" });
    const peer = await startStandin({ reply: () => ({ text: "Let me pass you to billing.", toolCalls: [{ name: "handoff", arguments: { agent_id: "agent_billing" } }] }) });
    const handingOff = recordingTools(() => ({ ok: true, data: { status: "handing_off" }, then: { handoff: { agent: billing, tools: [] } } }));
    const events = await say(open(peer, agent(), { tools: handingOff }), "It's about my bill.");
    expect(spoken(events)).toBe("Let me pass you to billing.");
    expect(events.at(-1)).toEqual({ type: "handoff", handoff: { agent: billing, tools: [] } });
    expect(handingOff.calls).toEqual([{ name: "handoff", arguments: { agent_id: "agent_billing" } }]);
    expect(peer.standin.requests()).toHaveLength(1);
  });

  it("gives an agent that takes a call over the conversation so far, its own prompt and its first message as said", async () => {
    const peer = await startStandin();
    const provider = new OpenAiDialogueProvider({ url: peer.url, models: MODELS, now: () => NOW, retry: NO_WAIT });
    const billing = agent({ id: "agent_billing", systemPrompt: "You answer billing questions.", firstMessage: "Billing here." });
    const history = [
      { role: "agent" as const, content: "Front desk, hello.", timestamp: 0 },
      { role: "user" as const, content: "i was charged twice", timestamp: 2 },
      { role: "agent" as const, content: "Let me pass you to billing.", timestamp: 4 },
    ];
    await say(provider.open({ agent: billing, context: {}, tools: NO_TOOLS, history }), "Can you refund it?");
    const [request] = peer.standin.requests();
    const system = String(request!.messages[0]!.content);
    expect(system).toContain("You answer billing questions.");
    expect(system).toContain("passed the call to you");
    expect(request!.messages.slice(1).map((m) => [m.role, m.content])).toEqual([
      ["assistant", "Front desk, hello."],
      ["user", "i was charged twice"],
      ["assistant", "Let me pass you to billing."],
      ["assistant", "Billing here."],
      ["user", "Can you refund it?"],
    ]);
  });

  it("says the agent's transfer message when the model transfers without a word", async () => {
    const peer = await startStandin({ reply: () => ({ toolCalls: [{ name: "transfer_call", arguments: {} }] }) });
    const settings = agent({ transferEnabled: true, transferNumber: "+15550001111" });
    const events = await say(open(peer, settings), "A human, please.");
    expect(events).toEqual([{ type: "text", text: settings.transferMessage }, { type: "transfer" }]);
  });

  it("does not transfer when the control plane refuses the transfer", async () => {
    const peer = await startStandin({ reply: afterToolResult({ toolCalls: [{ name: "transfer_call", arguments: {} }] }, { text: "I can't transfer you, sorry." }) });
    const refusing = recordingTools(() => ({ ok: false, error: "transfer is not available on this line" }));
    const events = await say(open(peer, agent({ transferEnabled: false }), { tools: refusing }), "A human, please.");
    expect(events.some((e) => e.type === "transfer")).toBe(false);
    expect(spoken(events)).toBe("I can't transfer you, sorry.");
  });

  it("yields end_call with the model's reason", async () => {
    const peer = await startStandin({ reply: () => ({ text: "Goodbye, have a nice day!", toolCalls: [{ name: "end_call", arguments: { reason: "caller_goodbye" } }] }) });
    const events = await say(open(peer), "That's all, bye.");
    expect(spoken(events)).toBe("Goodbye, have a nice day!");
    expect(events.at(-1)).toEqual({ type: "end_call", reason: "caller_goodbye" });
    expect(peer.standin.requests()).toHaveLength(1);
  });

  it("lists the caller at once on do_not_call, then lets the model confirm and hang up with reason do_not_call", async () => {
    const peer = await startStandin({
      reply: afterToolResult(
        { toolCalls: [{ name: "do_not_call", arguments: {} }] },
        { text: "Sorry for the trouble, you won't hear from us again. Goodbye.", toolCalls: [{ name: "end_call", arguments: { reason: "do_not_call" } }] },
      ),
    });
    const listing = recordingTools((name, args) => (name === "do_not_call" ? { ok: true, data: { status: "listed" } } : { ok: true, data: {}, then: { endCall: String(args.reason) } }));
    const events = await say(open(peer, agent(), { tools: listing }), "Stop calling me.");
    expect(listing.calls[0]).toEqual({ name: "do_not_call", arguments: {} });
    expect(spoken(events)).toBe("Sorry for the trouble, you won't hear from us again. Goodbye.");
    expect(events.at(-1)).toEqual({ type: "end_call", reason: "do_not_call" });
    const [, second] = peer.standin.requests();
    expect(second!.messages.at(-1)).toMatchObject({ role: "tool", content: JSON.stringify({ status: "listed" }) });
  });

  it("keeps only what the caller heard of a reply cut off by a barge-in", async () => {
    const peer = await startStandin();
    const session = open(peer);
    await say(session, "I need a cleaning.");
    session.truncateLastReply("Sure, I can help");
    await say(session, "Wait, actually on Friday.");
    expect(peer.standin.requests()[1]!.messages.slice(1)).toEqual([
      { role: "user", content: "I need a cleaning." },
      { role: "assistant", content: "Sure, I can help" },
      { role: "user", content: "Wait, actually on Friday." },
    ]);
  });

  it("keeps only what the caller heard of the greeting", async () => {
    const peer = await startStandin();
    const session = open(peer, agent({ firstMessage: "Hello, this is Ava from Bright Smile Dental. How can I help?" }));
    session.truncateLastReply("Hello, this is Ava");
    await say(session, "Hi Ava.");
    expect(peer.standin.requests()[0]!.messages[1]).toEqual({ role: "assistant", content: "Hello, this is Ava" });
  });

  it("keeps the system message and a bounded history on a long call", async () => {
    const peer = await startStandin();
    const session = open(peer);
    for (let turn = 1; turn <= 30; turn++) await say(session, `Turn ${turn}.`);
    const last = peer.standin.requests().at(-1)!;
    expect(last.messages[0]!.role).toBe("system");
    expect(last.messages.length).toBeLessThanOrEqual(41);
    expect(last.messages.at(-1)).toEqual({ role: "user", content: "Turn 30." });
    expect(last.messages.some((m) => m.content === "Turn 1.")).toBe(false);
  });

  it("sends the API key as a Bearer token", async () => {
    const peer = await startStandin({ apiKey: "sk-test-right" });
    const events = await say(open(peer, agent(), { config: { apiKey: "sk-test-right" } }), "hello");
    expect(spoken(events)).toBe(DEFAULT_STANDIN_REPLY);
  });

  it("fails a refused key with a non-retryable error that does not contain the key", async () => {
    const peer = await startStandin({ apiKey: "sk-test-right" });
    const error = await say(open(peer, agent(), { config: { apiKey: "sk-test-wrong" } }), "hello").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatCompletionsError);
    expect(error).toMatchObject({ status: 401, retryable: false, code: "http_status" });
    expect((error as Error).message).not.toContain("sk-test-wrong");
    expect(peer.standin.requests()).toHaveLength(0);
  });

  it("fails a server error with a retryable error carrying the status", async () => {
    const peer = await startStandin({ reply: () => ({ error: { status: 500, message: "The server had an error." } }) });
    const error = await say(open(peer), "hello").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatCompletionsError);
    expect(error).toMatchObject({ status: 500, retryable: true });
    expect((error as Error).message).toContain("The server had an error.");
  });

  it("treats 408 and 429 as retryable and other 4xx as not, as every provider does", async () => {
    const statuses: Record<string, number> = { "small-model": 429, "big-model": 408 };
    const peer = await startStandin({ reply: (r) => ({ error: { status: statuses[r.model] ?? 404, message: "nope" } }) });
    const limited = await say(open(peer, agent({ model: "llm-small" })), "hello").catch((e: unknown) => e);
    const timedOut = await say(open(peer, agent({ model: "llm-large" })), "hello").catch((e: unknown) => e);
    const missing = await say(open(peer, agent({ model: "llm-alt" })), "hello").catch((e: unknown) => e);
    expect(limited).toMatchObject({ status: 429, retryable: true });
    expect(timedOut).toMatchObject({ status: 408, retryable: true });
    expect(missing).toMatchObject({ status: 404, retryable: false });
  });

  it("scrubs the key from a server message that echoes it", async () => {
    const peer = await startStandin({ reply: () => ({ error: { status: 400, message: "bad request from key sk-test-secret" } }) });
    const error = await say(open(peer, agent(), { config: { apiKey: "sk-test-secret" } }), "hello").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as Error).message).not.toContain("sk-test-secret");
  });

  it("fails a connection refused with a retryable network error", async () => {
    const port = await closedLoopbackPort();
    const provider = new OpenAiDialogueProvider({ url: `http://127.0.0.1:${port}`, models: MODELS, retry: NO_WAIT });
    const error = await say(provider.open({ agent: agent(), context: {}, tools: NO_TOOLS }), "hello").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "network", retryable: true, status: null });
  });

  it("gives up with a retryable timeout when the server sends nothing in time", async () => {
    const peer = await startStandin({ firstTokenDelayMs: 60_000 });
    const error = await say(open(peer, agent(), { config: { requestTimeoutMs: 100 } }), "hello").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "timeout", retryable: true });
  });

  it("stops at once when aborted mid-stream and closes the connection", async () => {
    // Forty words at 250 ms each: far past the test's timeout if the abort were not honoured.
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const peer = await startStandin({ tokenIntervalMs: 250, reply: (r) => (r.messages.length === 2 ? { text } : { text: "Okay." }) });
    const session = open(peer);
    const abort = new AbortController();
    const events: DialogueEvent[] = [];
    for await (const event of session.respond("hello", abort.signal)) {
      events.push(event);
      if (events.length === 2) abort.abort();
    }
    expect(events).toHaveLength(2);
    await expect.poll(() => peer.cutOff).toBe(1);

    // What was streamed before the abort stays as the reply, for the call session to truncate.
    await say(session, "sorry, go on");
    expect(peer.standin.requests()[1]!.messages.slice(1, 3)).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "word0 word1" },
    ]);
  });

  it("does not send a request when already aborted", async () => {
    const peer = await startStandin();
    const abort = new AbortController();
    abort.abort();
    expect(await say(open(peer), "hello", abort.signal)).toEqual([]);
    expect(peer.standin.requests()).toHaveLength(0);
  });
});

describe("openai dialogue provider: retries", () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  });

  /** A bare HTTP server on 127.0.0.1 that counts its requests. */
  async function startServer(handler: http.RequestListener): Promise<{ url: string; requests: () => number }> {
    let requests = 0;
    const server = http.createServer((req, res) => {
      requests++;
      handler(req, res);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
  }

  it("sends the request again after a 503 and streams the reply", async () => {
    let failures = 1;
    const peer = await startStandin({ reply: () => (failures-- > 0 ? { error: { status: 503, message: "The server is overloaded." } } : { text: DEFAULT_STANDIN_REPLY }) });
    expect(spoken(await say(open(peer), "hello"))).toBe(DEFAULT_STANDIN_REPLY);
    expect(peer.standin.requests()).toHaveLength(2);
  });

  it("does not send the request again after a 401", async () => {
    const peer = await startStandin({ reply: () => ({ error: { status: 401, message: "Incorrect API key provided." } }) });
    const error = await say(open(peer), "hello").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(peer.standin.requests()).toHaveLength(1);
  });

  it("does not wait for a Retry-After longer than a caller can, and says how long it was", async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(429, { "content-type": "application/json", "retry-after": "120" }).end(JSON.stringify({ error: { message: "Rate limit reached." } }));
    });
    const provider = new OpenAiDialogueProvider({ url: server.url, models: MODELS });
    const error = await say(provider.open({ agent: agent(), context: {}, tools: NO_TOOLS }), "hello").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 120_000 });
    expect(server.requests()).toBe(1);
  });

  it("stops at once when aborted while waiting to send the request again", async () => {
    const peer = await startStandin({ reply: () => ({ error: { status: 503, message: "The server is overloaded." } }) });
    // A minute's wait: far past the test's timeout if the abort were not honoured.
    const session = open(peer, agent(), { config: { retry: { delaysMs: [60_000], maxRetryAfterMs: 2000 } } });
    const abort = new AbortController();
    const turn = say(session, "hello", abort.signal);
    await expect.poll(() => peer.standin.requests().length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    abort.abort();
    expect(await turn).toEqual([]);
    expect(peer.standin.requests()).toHaveLength(1);
  });

  it("does not send the request again once the reply has started streaming", async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Sure," } }] })}\n\n`);
      // The connection breaks after the first words.
      setTimeout(() => res.destroy(), 20);
    });
    const provider = new OpenAiDialogueProvider({ url: server.url, models: MODELS, retry: NO_WAIT });
    const events: DialogueEvent[] = [];
    const failure = (async () => {
      for await (const event of provider.open({ agent: agent(), context: {}, tools: NO_TOOLS }).respond("hello", new AbortController().signal)) events.push(event);
    })();
    await expect(failure).rejects.toMatchObject({ code: "network", retryable: true });
    expect(events).toEqual([{ type: "text", text: "Sure," }]);
    expect(server.requests()).toBe(1);
  });
});

describe("server-sent events", () => {
  it("reads events split across chunks, with CRLF line ends, comments and multi-line data", async () => {
    const wire = ': keep-alive\r\ndata: {"a":1}\r\n\r\nevent: x\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(wire);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.slice(i, i + 3);
    }
    const events: string[] = [];
    for await (const data of readServerSentEvents(chunks())) events.push(data);
    expect(events).toEqual(['{"a":1}', "line one\nline two", "[DONE]"]);
  });
});

describe("tool call assembly", () => {
  it("joins fragments by index, and takes whole calls sent without an index (Ollama)", () => {
    const streamed = new ToolCallAssembler();
    streamed.push([{ index: 0, id: "call_a", function: { name: "end_call", arguments: "" } }]);
    streamed.push([{ index: 0, function: { arguments: '{"reason":' } }]);
    streamed.push([{ index: 0, function: { arguments: '"done"}' } }]);
    expect(streamed.finish()).toEqual([{ id: "call_a", type: "function", function: { name: "end_call", arguments: '{"reason":"done"}' } }]);

    const whole = new ToolCallAssembler();
    whole.push([
      { id: "call_1", function: { name: "book_appointment", arguments: "{}" } },
      { id: "call_2", function: { name: "end_call", arguments: '{"reason":"done"}' } },
    ]);
    expect(whole.finish().map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ["call_1", "book_appointment", "{}"],
      ["call_2", "end_call", '{"reason":"done"}'],
    ]);
  });
});
