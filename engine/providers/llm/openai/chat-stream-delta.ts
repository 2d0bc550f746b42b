import { ChatCompletionsError } from "./chat-completions-error.js";
import type { ChatToolCallDelta } from "./chat-completions-wire.js";

/** What one streamed chunk adds to the reply: text and pieces of tool calls (either may be empty). */
export interface ChatStreamDelta {
  content: string;
  toolCalls: ChatToolCallDelta[];
}

/**
 * Reads one `data:` payload of a chat-completions stream. Servers differ in what else they put
 * in a chunk (usage-only chunks with no choices, `reasoning_content`, a repeated role), so only
 * the first choice's `content` and `tool_calls` are read and everything else is ignored. An
 * `{"error": ...}` payload is the server giving up mid-stream.
 */
export function parseChatChunk(data: string, redact: (text: string) => string): ChatStreamDelta {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch (err) {
    throw new ChatCompletionsError("invalid_response", "chat completions stream sent a chunk that is not JSON", { retryable: false, cause: err });
  }
  if (!isRecord(chunk)) throw new ChatCompletionsError("invalid_response", "chat completions stream sent a chunk that is not an object", { retryable: false });
  if (chunk.error !== undefined && chunk.error !== null) {
    const message = isRecord(chunk.error) && typeof chunk.error.message === "string" ? chunk.error.message : "unknown error";
    throw new ChatCompletionsError("stream_error", `chat completions stream failed: ${redact(message)}`, { retryable: true });
  }
  const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  const delta = isRecord(choice) && isRecord(choice.delta) ? choice.delta : {};
  return {
    content: typeof delta.content === "string" ? delta.content : "",
    toolCalls: Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isRecord).map(readToolCallDelta) : [],
  };
}

function readToolCallDelta(value: Record<string, unknown>): ChatToolCallDelta {
  const fn = isRecord(value.function) ? value.function : {};
  return {
    ...(typeof value.index === "number" ? { index: value.index } : {}),
    ...(typeof value.id === "string" && value.id !== "" ? { id: value.id } : {}),
    function: {
      ...(typeof fn.name === "string" ? { name: fn.name } : {}),
      // Some servers send a complete call with its arguments as an object rather than JSON text.
      ...(typeof fn.arguments === "string" ? { arguments: fn.arguments } : isRecord(fn.arguments) ? { arguments: JSON.stringify(fn.arguments) } : {}),
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
