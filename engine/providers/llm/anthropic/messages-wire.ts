/**
 * The subset of the Anthropic Messages API wire format Parley speaks (request body, error
 * body), as documented at docs.anthropic.com (API version 2023-06-01).
 */

export type AnthropicContentBlock =
  | { type: "text"; text: string }
  /** A tool the model called; `input` is an object. */
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  /** A tool's result, in a user message right after the assistant message that called it. */
  | { type: "tool_result"; tool_use_id: string; content: string };

/** Messages must start with a user message and alternate between the two roles. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface AnthropicMessagesRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: AnthropicMessage[];
  stream: true;
  /** 0 to 1 (Anthropic's range). */
  temperature?: number;
  tools?: AnthropicTool[];
}

/** An error, as an HTTP error body and as the data of an in-stream `error` event. */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
}

/** The HTTP status each documented error type stands for (an in-stream error has none of its own). */
export const ERROR_TYPE_STATUS: Readonly<Record<string, number>> = Object.freeze({
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
});
