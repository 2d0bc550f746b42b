import type { ChatCompletionRequest, ChatMessage } from "../openai/chat-completions-wire.js";
import type { AnthropicContentBlock, AnthropicMessage, AnthropicMessagesRequest } from "./messages-wire.js";

/**
 * What stands before a conversation that starts with the agent (its greeting): Anthropic wants
 * the user first. A placeholder turn rather than the greeting in the system prompt, so the
 * greeting stays the agent's own words, which a barge-in truncates like any reply.
 */
export const CALL_CONNECTED = "(The call has connected.)";

/**
 * A chat-completions request (the form the shared dialogue session and ChatHistory keep) as a
 * Messages request: the system message goes to `system`; assistant tool calls become
 * `tool_use` blocks and tool messages `tool_result` blocks in a user message; messages of the
 * same role in a row are merged, and a leading assistant message gets a user placeholder, as
 * Anthropic requires. A tool call left without its result (a turn given up while the tool ran)
 * is answered as interrupted, since Anthropic refuses a `tool_use` with no `tool_result`.
 */
export function messagesRequest(request: ChatCompletionRequest): AnthropicMessagesRequest {
  const system = request.messages.filter((m) => m.role === "system").map((m) => m.content);
  const messages = alternate(request.messages.flatMap(toAnthropic));
  return {
    model: request.model,
    max_tokens: request.max_tokens ?? 1024,
    ...(system.length > 0 ? { system: system.join("\n\n") } : {}),
    messages,
    stream: true,
    // The agent's temperature may be up to 2 (OpenAI's range); Anthropic's ends at 1.
    ...(request.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) }),
    ...(request.tools && request.tools.length > 0
      ? { tools: request.tools.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters })) }
      : {}),
  };
}

function toAnthropic(message: ChatMessage): AnthropicMessage[] {
  switch (message.role) {
    case "system":
      return [];
    case "user":
      return [{ role: "user", content: textBlocks(message.content) }];
    case "tool":
      return [{ role: "user", content: [{ type: "tool_result", tool_use_id: message.tool_call_id, content: message.content }] }];
    case "assistant": {
      const calls = (message.tool_calls ?? []).map((call): AnthropicContentBlock => ({ type: "tool_use", id: call.id, name: call.function.name, input: inputObject(call.function.arguments) }));
      return [{ role: "assistant", content: [...textBlocks(message.content ?? ""), ...calls] }];
    }
  }
}

/** Merges same-role neighbours, drops empty messages, starts with the user and answers every tool call. */
function alternate(messages: AnthropicMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    if (message.content.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === message.role) last.content.push(...message.content);
    else out.push({ role: message.role, content: [...message.content] });
  }
  if (out[0]?.role === "assistant") out.unshift({ role: "user", content: [{ type: "text", text: CALL_CONNECTED }] });
  out.forEach((message, i) => {
    if (message.role !== "assistant") return;
    const next = out[i + 1];
    const answered = new Set(next?.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])) ?? []);
    const missing: AnthropicContentBlock[] = message.content.flatMap((b) =>
      b.type === "tool_use" && !answered.has(b.id) ? [{ type: "tool_result", tool_use_id: b.id, content: JSON.stringify({ status: "error", error: "interrupted by the caller" }) }] : [],
    );
    if (missing.length === 0) return;
    // Tool results come first in the user message that follows the call.
    if (next) next.content.unshift(...missing);
    else out.push({ role: "user", content: missing });
  });
  return out;
}

/** Anthropic refuses empty text blocks. */
function textBlocks(text: string): AnthropicContentBlock[] {
  return text.trim() === "" ? [] : [{ type: "text", text }];
}

/** The call's arguments as an object (malformed JSON, already refused unrun, is echoed as `{}`). */
function inputObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
