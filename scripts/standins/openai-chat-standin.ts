import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChatCompletionChunk, ChatCompletionRequest, ChatErrorBody, ChatToolCallDelta } from "../../engine/providers/llm/openai/chat-completions-wire.js";

/** A request the stand-in accepted: the parsed body (model and messages checked). */
export type ChatRequest = ChatCompletionRequest;

export interface StandinToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent as it is (to stand in for a model's malformed JSON). */
  arguments: Record<string, unknown> | string;
}

/** What the stand-in answers: text and/or tool calls, or an HTTP error. */
export type StandinReply = { text?: string; toolCalls?: StandinToolCall[] } | { error: { status: number; message: string } };

export interface ChatStandinOptions {
  /** Wait before the first token: stands in for the model's time to first token. */
  firstTokenDelayMs: number;
  /** Wait between tokens (words, or tool-argument fragments). */
  tokenIntervalMs: number;
  /** Decides the answer to each request. Default: `DEFAULT_STANDIN_REPLY`. */
  reply?: (request: ChatRequest) => StandinReply;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
}

export interface ChatCompletionsStandin {
  /** Serves `POST /v1/chat/completions`; false (nothing written) for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The requests accepted so far, oldest first. */
  requests(): ChatRequest[];
}

export const DEFAULT_STANDIN_REPLY = "Sure, I can help with that. What day works best for you?";

const PATH = "/v1/chat/completions";
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Tool arguments are streamed in pieces this long, as models emit them over several tokens. */
const ARGUMENT_FRAGMENT_CHARS = 8;

/**
 * A local stand-in for an OpenAI-compatible chat-completions server, for tests and the latency
 * benchmark: it streams a scripted reply with fixed timing, so a measurement sees the engine's
 * own latency apart from model compute. It speaks the wire protocol (Bearer auth, OpenAI-style
 * error bodies, `chat.completion.chunk` SSE events, tool-call deltas, `data: [DONE]`); it only
 * streams (`stream: true`).
 */
export function chatCompletionsStandin(options: ChatStandinOptions): ChatCompletionsStandin {
  const accepted: ChatRequest[] = [];
  let completions = 0;
  let toolCallIds = 0;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") return sendError(res, 405, "Only POST is supported.", "invalid_request_error");
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      // Never echo the key that was sent.
      return sendError(res, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
    }
    const body = await readBody(req);
    if (body === null) return sendError(res, 413, "The request body is too large.", "invalid_request_error");
    const request = parseRequest(body);
    if (typeof request === "string") return sendError(res, 400, request, "invalid_request_error");
    accepted.push(request);

    const reply = options.reply?.(request) ?? defaultReply(request);
    if ("error" in reply) return sendError(res, reply.error.status, reply.error.message, reply.error.status >= 500 ? "server_error" : "invalid_request_error");

    const closed = new AbortController();
    res.on("close", () => closed.abort());
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();

    const id = `chatcmpl-standin-${++completions}`;
    const created = Math.floor(Date.now() / 1000);
    const send = (delta: ChatCompletionChunk["choices"][number]["delta"], finishReason: string | null = null) => {
      const chunk: ChatCompletionChunk = { id, object: "chat.completion.chunk", created, model: request.model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    };
    const wait = async (ms: number) => {
      if (ms > 0) await sleep(ms, undefined, { signal: closed.signal });
      if (closed.signal.aborted) throw closed.signal.reason;
    };

    try {
      await wait(options.firstTokenDelayMs);
      send({ role: "assistant", content: "" });
      const tokens = reply.text?.match(/\s*\S+/g) ?? [];
      for (const [i, token] of tokens.entries()) {
        if (i > 0) await wait(options.tokenIntervalMs);
        send({ content: token });
      }
      const toolCalls = reply.toolCalls ?? [];
      for (const [index, call] of toolCalls.entries()) {
        const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
        if (index > 0 || tokens.length > 0) await wait(options.tokenIntervalMs);
        send({ tool_calls: [{ index, id: `call_standin_${++toolCallIds}`, type: "function", function: { name: call.name, arguments: "" } }] });
        for (let at = 0; at < args.length; at += ARGUMENT_FRAGMENT_CHARS) {
          await wait(options.tokenIntervalMs);
          const fragment: ChatToolCallDelta = { index, function: { arguments: args.slice(at, at + ARGUMENT_FRAGMENT_CHARS) } };
          send({ tool_calls: [fragment] });
        }
      }
      send({}, toolCalls.length > 0 ? "tool_calls" : "stop");
      res.end("data: [DONE]\n\n");
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
  };
}

/**
 * The canned answer: for a structured-output request (`response_format` with a JSON schema,
 * as the post-call analysis sends), the simplest JSON that follows the schema; else
 * DEFAULT_STANDIN_REPLY.
 */
function defaultReply(request: ChatRequest): StandinReply {
  const schema = request.response_format?.json_schema.schema;
  return { text: schema ? JSON.stringify(instanceOf(schema, "answer")) : DEFAULT_STANDIN_REPLY };
}

/** A value that follows `schema`: objects with every property, the first enum value, null where allowed, "stand-in <name>" for text. */
function instanceOf(schema: Record<string, unknown>, name: string): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.includes("null")) return null;
  switch (types[0]) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([key, sub]) => [key, instanceOf(sub, key)]));
    }
    case "array":
      return [];
    case "number":
    case "integer":
      return 0.5;
    case "boolean":
      return false;
    default:
      return `stand-in ${name}`;
  }
}

/** The request, or what is wrong with it (OpenAI's wording where it has one). */
function parseRequest(body: string): ChatRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return "We could not parse the JSON body of your request.";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "The request body must be a JSON object.";
  const request = value as Record<string, unknown>;
  if (typeof request.model !== "string" || request.model === "") return "you must provide a model parameter";
  if (!Array.isArray(request.messages) || request.messages.length === 0) return "'messages' must be a non-empty array";
  if (request.stream !== true) return "This stand-in only streams: set 'stream' to true.";
  return value as ChatRequest;
}

/** The body as text, or null past the size limit. */
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

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  const body: ChatErrorBody = { error: { message, type, param: null, code } };
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
