import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { AnthropicErrorBody, AnthropicMessage, AnthropicMessagesRequest } from "../../engine/providers/llm/anthropic/messages-wire.js";

/** What the stand-in answers a request with. */
export type AnthropicStandinReply =
  /** A streamed reply: text in word deltas, then tool_use blocks with their input in JSON fragments (a string is sent as it is, to stand in for malformed JSON). */
  | { text?: string; toolUses?: Array<{ name: string; input: Record<string, unknown> | string }> }
  /** An HTTP error with Anthropic's error body. */
  | { error: { status: number; type: string; message: string; retryAfter?: string } }
  /** A 200 stream whose `message_start` is followed by an `error` event (e.g. overloaded_error). */
  | { streamError: { type: string; message: string } }
  /** A 200 with its headers, then nothing (a stalled stream). */
  | { stall: true }
  /** A 200 stream with `message_start`, then a `data:` line that is not JSON. */
  | { malformed: true };

export interface AnthropicStandinOptions {
  /** Decides the answer to each accepted request. Default: DEFAULT_ANTHROPIC_REPLY as text. */
  reply?: (request: AnthropicMessagesRequest) => AnthropicStandinReply;
  /** When set, requests must carry `x-api-key: <apiKey>` (401 authentication_error otherwise, the key never echoed). */
  apiKey?: string;
  /** Wait between stream events' text words and input fragments. Default 0. */
  tokenIntervalMs?: number;
}

export interface AnthropicMessagesStandin {
  /** Serves `POST /v1/messages`; false (nothing written) for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The requests accepted so far (headers and body checked), oldest first. */
  requests(): AnthropicMessagesRequest[];
  /** The headers of every request that reached the path, accepted or not. */
  headers(): IncomingMessage["headers"][];
}

export const DEFAULT_ANTHROPIC_REPLY = "Sure, I can help with that. What day works best for you?";

const PATH = "/v1/messages";
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const FRAGMENT_CHARS = 8;

/**
 * A local stand-in for the Anthropic Messages API (version 2023-06-01), streamed only. It
 * checks what the API checks that Parley could get wrong (the `x-api-key` and
 * `anthropic-version` headers, a JSON body with model, max_tokens, messages that start with
 * the user and alternate, each tool_use answered by a tool_result in the next message,
 * `stream: true`, tools with an input_schema) and answers with Anthropic's SSE events
 * (`message_start`, `content_block_start`/`_delta`/`_stop`, `ping`, `message_delta`,
 * `message_stop`) or error bodies, and fails on demand.
 */
export function anthropicMessagesStandin(options: AnthropicStandinOptions = {}): AnthropicMessagesStandin {
  const accepted: AnthropicMessagesRequest[] = [];
  const seenHeaders: IncomingMessage["headers"][] = [];
  let messages = 0;
  let toolUses = 0;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    seenHeaders.push(req.headers);
    if (req.method !== "POST") return sendError(res, 405, "invalid_request_error", "Only POST is supported.");
    if (options.apiKey !== undefined && req.headers["x-api-key"] !== options.apiKey) return sendError(res, 401, "authentication_error", "invalid x-api-key");
    if (req.headers["anthropic-version"] !== "2023-06-01") return sendError(res, 400, "invalid_request_error", "anthropic-version: header is required and must be 2023-06-01");
    if (!String(req.headers["content-type"]).startsWith("application/json")) return sendError(res, 400, "invalid_request_error", "content-type must be application/json");
    const body = await readBody(req);
    if (body === null) return sendError(res, 413, "request_too_large", "Request exceeds the maximum allowed number of bytes.");
    const request = parseRequest(body);
    if (typeof request === "string") return sendError(res, 400, "invalid_request_error", request);
    accepted.push(request);

    const reply = options.reply?.(request) ?? { text: DEFAULT_ANTHROPIC_REPLY };
    if ("error" in reply) {
      const body: AnthropicErrorBody = { type: "error", error: { type: reply.error.type, message: reply.error.message } };
      res.writeHead(reply.error.status, { "content-type": "application/json", ...(reply.error.retryAfter ? { "retry-after": reply.error.retryAfter } : {}) });
      return void res.end(JSON.stringify(body));
    }

    const closed = new AbortController();
    res.on("close", () => closed.abort());
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    res.flushHeaders();
    if ("stall" in reply) return;
    const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const wait = async () => {
      if (options.tokenIntervalMs) await sleep(options.tokenIntervalMs, undefined, { signal: closed.signal });
      if (closed.signal.aborted) throw closed.signal.reason;
    };

    try {
      send("message_start", {
        message: { id: `msg_standin_${++messages}`, type: "message", role: "assistant", content: [], model: request.model, stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
      });
      if ("streamError" in reply) return void res.end(`event: error\ndata: ${JSON.stringify({ type: "error", error: reply.streamError })}\n\n`);
      if ("malformed" in reply) return void res.end("event: content_block_start\ndata: {not json\n\n");
      send("ping", {});
      let index = 0;
      const words = reply.text?.match(/\s*\S+/g) ?? [];
      if (words.length > 0) {
        send("content_block_start", { index, content_block: { type: "text", text: "" } });
        for (const [i, word] of words.entries()) {
          if (i > 0) await wait();
          send("content_block_delta", { index, delta: { type: "text_delta", text: word } });
        }
        send("content_block_stop", { index });
        index++;
      }
      for (const use of reply.toolUses ?? []) {
        await wait();
        send("content_block_start", { index, content_block: { type: "tool_use", id: `toolu_standin_${++toolUses}`, name: use.name, input: {} } });
        const json = typeof use.input === "string" ? use.input : JSON.stringify(use.input);
        for (let at = 0; at < json.length; at += FRAGMENT_CHARS) {
          await wait();
          send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(at, at + FRAGMENT_CHARS) } });
        }
        send("content_block_stop", { index });
        index++;
      }
      send("message_delta", { delta: { stop_reason: reply.toolUses?.length ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } });
      send("message_stop", {});
      res.end();
    } catch {
      // The client went away (an abort): nothing more to send.
      res.destroy();
    }
  }

  return {
    handle(req, res) {
      if (new URL(req.url ?? "/", "http://standin").pathname !== PATH) return false;
      serve(req, res).catch(() => res.destroy());
      return true;
    },
    requests: () => [...accepted],
    headers: () => [...seenHeaders],
  };
}

/** The request, or what is wrong with it (in the API's spirit). */
function parseRequest(body: string): AnthropicMessagesRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return "The request body is not valid JSON.";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "The request body must be a JSON object.";
  const request = value as Record<string, unknown>;
  if (typeof request.model !== "string" || request.model === "") return "model: Field required";
  if (!Number.isInteger(request.max_tokens) || (request.max_tokens as number) < 1) return "max_tokens: Field required";
  if (request.system !== undefined && typeof request.system !== "string") return "system: Input should be a valid string";
  if (request.stream !== true) return "This stand-in only streams: set 'stream' to true.";
  if (request.temperature !== undefined && !(typeof request.temperature === "number" && request.temperature >= 0 && request.temperature <= 1)) return "temperature: range: 0..1";
  if (request.tools !== undefined) {
    if (!Array.isArray(request.tools)) return "tools: Input should be a valid list";
    for (const tool of request.tools as Array<Record<string, unknown>>) {
      if (typeof tool?.name !== "string" || typeof tool.input_schema !== "object" || tool.input_schema === null) return "tools: each tool needs a name and an input_schema";
    }
  }
  const problem = conversationProblem(request.messages);
  return problem ?? (value as AnthropicMessagesRequest);
}

/** Why `messages` would be refused, or null. */
function conversationProblem(value: unknown): string | null {
  if (!Array.isArray(value) || value.length === 0) return "messages: at least one message is required";
  const messages = value as AnthropicMessage[];
  for (const [i, message] of messages.entries()) {
    const expected = i % 2 === 0 ? "user" : "assistant";
    if (message?.role !== expected) return `messages: roles must alternate between "user" and "assistant", starting with "user" (message ${i})`;
    if (!Array.isArray(message.content) || message.content.length === 0) return `messages.${i}: content must be a non-empty list of blocks`;
    for (const block of message.content) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text.trim() === "")) return `messages.${i}: text content blocks must be non-empty`;
    }
    const uses = message.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    if (uses.length > 0 && message.role !== "assistant") return `messages.${i}: tool_use blocks belong to the assistant`;
    const results = new Set(messages[i + 1]?.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])) ?? []);
    for (const id of uses) if (!results.has(id)) return `messages.${i + 1}: tool_use ids were found without tool_result blocks immediately after: ${id}`;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const previous = messages[i - 1]?.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])) ?? [];
      if (!previous.includes(block.tool_use_id)) return `messages.${i}: unexpected tool_use_id in tool_result blocks: ${block.tool_use_id}`;
    }
  }
  // Anthropic takes a last assistant message as a prefill; Parley never sends one, so here it is a bug.
  if (messages.at(-1)?.role !== "user") return "messages: the last message must be from the user";
  return null;
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  const body: AnthropicErrorBody = { type: "error", error: { type, message } };
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
