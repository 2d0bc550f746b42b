import { isRetryableStatus } from "../../provider-error.js";
import type { ChatStreamDelta } from "../openai/chat-stream-delta.js";
import { AnthropicError } from "./anthropic-error.js";
import { ERROR_TYPE_STATUS } from "./messages-wire.js";

/** The stream's last event: the reply is complete. */
export const MESSAGE_STOP = "message_stop";

/**
 * Reads one `data:` payload of a Messages stream. Text deltas and tool calls (a `tool_use`
 * block's start with its id and name, then its input as JSON fragments, keyed by the block's
 * `index`) come back in the shared delta form; `message_stop` as MESSAGE_STOP; everything
 * else (`message_start`, `ping`, `content_block_stop`, `message_delta`, thinking, event types
 * added later) as null. An `error` event is the server giving up mid-stream: retryable as its
 * type's status is. Anything malformed is an AnthropicError, never a TypeError.
 */
export function parseStreamEvent(data: string, redact: (text: string) => string): ChatStreamDelta | typeof MESSAGE_STOP | null {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch (err) {
    throw invalid("an event that is not JSON", err);
  }
  if (!isRecord(event) || typeof event.type !== "string") throw invalid("an event without a type");
  switch (event.type) {
    case "content_block_start": {
      const block = event.content_block;
      if (!isRecord(block) || !isIndex(event.index)) throw invalid("a content_block_start without its block or index");
      if (block.type !== "tool_use") return null;
      if (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string" || block.name === "") throw invalid("a tool_use block without its id or name");
      return { content: "", toolCalls: [{ index: event.index, id: block.id, function: { name: block.name, arguments: "" } }] };
    }
    case "content_block_delta": {
      const delta = event.delta;
      if (!isRecord(delta) || !isIndex(event.index)) throw invalid("a content_block_delta without its delta or index");
      if (delta.type === "text_delta") {
        if (typeof delta.text !== "string") throw invalid("a text_delta without text");
        return delta.text === "" ? null : { content: delta.text, toolCalls: [] };
      }
      if (delta.type === "input_json_delta") {
        if (typeof delta.partial_json !== "string") throw invalid("an input_json_delta without partial_json");
        return delta.partial_json === "" ? null : { content: "", toolCalls: [{ index: event.index, function: { arguments: delta.partial_json } }] };
      }
      return null;
    }
    case "message_stop":
      return MESSAGE_STOP;
    case "error": {
      const error = isRecord(event.error) ? event.error : {};
      const type = typeof error.type === "string" ? error.type : "unknown_error";
      const message = typeof error.message === "string" ? redact(error.message).slice(0, 300) : "no message";
      // An unknown type is the server's trouble rather than the request's: worth another try.
      const status = ERROR_TYPE_STATUS[type] ?? 500;
      throw new AnthropicError("stream_error", `anthropic messages stream failed (${redact(type).slice(0, 64)}): ${message}`, { retryable: isRetryableStatus(status) });
    }
    default:
      return null;
  }
}

function invalid(what: string, cause?: unknown): AnthropicError {
  return new AnthropicError("invalid_response", `anthropic messages stream sent ${what}`, { retryable: false, cause });
}

function isIndex(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
