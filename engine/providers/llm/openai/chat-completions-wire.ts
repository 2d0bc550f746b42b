/**
 * The subset of the OpenAI chat-completions wire format Parley speaks (request body, streamed
 * chunks, error body). OpenAI, Ollama, vLLM and llama.cpp's server all accept and send it.
 */

export interface ChatToolCall {
  id: string;
  type: "function";
  /** `arguments` is JSON text, exactly as the model wrote it. */
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  /** `content` is null when the message only calls tools. */
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  temperature?: number;
  max_tokens?: number;
  tools?: ChatTool[];
  /** Structured output: the reply is JSON that follows `schema` (OpenAI's `json_schema` form, which vLLM, llama.cpp and Ollama accept too). */
  response_format?: { type: "json_schema"; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
}

/** One piece of a streamed tool call: the first names it, the next ones carry argument text. */
export interface ChatToolCallDelta {
  /** Which tool call of the message this piece belongs to (several may stream side by side). */
  index?: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

/** One `data:` event of a streamed completion. */
export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role?: "assistant"; content?: string | null; tool_calls?: ChatToolCallDelta[] };
    /** Set on the last chunk: `stop`, `length`, `tool_calls`, ... */
    finish_reason: string | null;
  }[];
}

/** The error body of a failed request (and of an error sent inside a stream). */
export interface ChatErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}
