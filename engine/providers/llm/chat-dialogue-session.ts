import type { ToolExecutor, ToolResult } from "../../tools.js";
import type { AgentSettings } from "../../types.js";
import type { CallerTurn, DialogueEvent, DialogueSession } from "./dialogue-provider.js";
import type { AssistantMessage, ChatCompletionRequest, ChatToolCall } from "./openai/chat-completions-wire.js";
import type { ChatHistory } from "./openai/chat-history.js";
import type { ChatStreamDelta } from "./openai/chat-stream-delta.js";
import { ToolCallAssembler } from "./openai/tool-call-assembler.js";

/** Requests per caller turn: the reply, and after tool results up to two more (a booking, then its confirmation). */
export const MAX_ROUNDS_PER_TURN = 3;

/**
 * Where a session's replies come from: a request in the chat-completions form (the form
 * ChatHistory keeps), the reply's text and tool-call pieces out. The OpenAI client speaks it
 * as it is; the Anthropic client translates both ways.
 */
export interface ChatStreamSource {
  stream(request: ChatCompletionRequest, signal: AbortSignal): AsyncIterable<ChatStreamDelta>;
}

/**
 * One call with a chat model (OpenAI-compatible or Anthropic). Each caller turn sends the
 * history and streams the reply's text as it arrives. Tool calls are run when their request finishes (the control
 * plane's tools, one after another) and their real results go back to the model, which is
 * asked again so it can say what happened; a tool whose result asks for a transfer or a
 * hang-up ends the turn.
 */
export class ChatDialogueSession implements DialogueSession {
  constructor(
    private readonly client: ChatStreamSource,
    private readonly history: ChatHistory,
    private readonly agent: AgentSettings,
    private readonly model: string,
    private readonly tools: ToolExecutor,
  ) {}

  respond(userText: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
    return this.turn(userText, signal);
  }

  /** The keys reach the model as a plain statement in the caller's turn. */
  respondToKeys(digits: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
    return this.turn(keysText(digits), signal);
  }

  private async *turn(userText: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
    if (signal.aborted) return;
    this.history.push({ role: "user", content: userText });
    let spoken = "";
    let ending: DialogueEvent | null = null;
    for (let round = 1; round <= MAX_ROUNDS_PER_TURN && ending === null; round++) {
      const request = this.request();
      // In the history from its first word, so a barge-in mid-stream can truncate it.
      const reply: AssistantMessage = { role: "assistant", content: "" };
      this.history.push(reply);
      let content = "";
      const calls = new ToolCallAssembler();
      try {
        for await (const delta of this.client.stream(request, signal)) {
          calls.push(delta.toolCalls);
          if (delta.content === "") continue;
          // Text after a tool round must not run into the sentence before it.
          const text = content === "" && /\S$/.test(spoken) && /^\S/.test(delta.content) ? ` ${delta.content}` : delta.content;
          content += text;
          spoken += text;
          reply.content = content;
          yield { type: "text", text };
        }
      } catch (err) {
        if (content === "") this.history.remove(reply);
        throw err;
      }
      // Aborted: tool calls not acted on are not kept either (the caller never got them).
      const toolCalls = signal.aborted ? [] : calls.finish();
      if (toolCalls.length === 0) {
        if (content === "") this.history.remove(reply);
        if (signal.aborted) return;
        break;
      }

      reply.tool_calls = toolCalls;
      if (content === "") reply.content = null;
      let answered = false;
      for (const call of toolCalls) {
        const result = await this.run(call, signal);
        if (signal.aborted) return;
        this.history.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(toolMessage(result)) });
        const then = result.ok ? result.then : undefined;
        if (then) ending ??= then === "transfer" ? { type: "transfer" } : { type: "end_call", reason: then.endCall };
        else answered = true;
      }
      if (!answered) break;
    }
    if (ending?.type === "transfer" && spoken.trim() === "" && this.agent.transferMessage.trim() !== "") {
      // Transferring without a word would leave the caller in silence: say the agent's transfer line.
      this.history.push({ role: "assistant", content: this.agent.transferMessage });
      yield { type: "text", text: this.agent.transferMessage };
    }
    if (ending) yield ending;
  }

  truncateLastReply(heardText: string): void {
    this.history.truncateLastReply(heardText);
  }

  /**
   * A turn another provider of the chain answered, kept as if this session had (see
   * DialogueSession.recordTurn); when this session was asked first and failed, its history
   * already ends with the caller's words.
   */
  recordTurn(caller: CallerTurn, reply: string): void {
    const userText = "words" in caller ? caller.words : keysText(caller.keys);
    const last = this.history.last();
    if (last?.role !== "user" || last.content !== userText) this.history.push({ role: "user", content: userText });
    if (reply) this.history.push({ role: "assistant", content: reply });
  }

  private request(): ChatCompletionRequest {
    return {
      model: this.model,
      messages: this.history.forRequest(),
      stream: true,
      temperature: this.agent.temperature,
      max_tokens: this.agent.maxTokens,
      ...(this.tools.definitions.length > 0
        ? { tools: this.tools.definitions.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
        : {}),
    };
  }

  /** Runs one tool call; arguments that are not a JSON object (cut off by `max_tokens`, malformed) are refused unrun. */
  private run(call: ChatToolCall, signal: AbortSignal): Promise<ToolResult> {
    const args = parseArguments(call.function.arguments);
    if (!args) return Promise.resolve({ ok: false, error: "the arguments were not a valid JSON object" });
    return this.tools.execute(call.function.name, args, signal);
  }
}

/** What the model reads of a tool's result. */
function toolMessage(result: ToolResult): Record<string, unknown> {
  return result.ok ? { status: "ok", ...result.data } : { status: "error", error: result.error, ...result.data };
}

/** Tools without parameters may come with empty arguments rather than `{}`. */
function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Keys the caller pressed, as a plain statement in the caller's turn. */
function keysText(digits: string): string {
  return `(The caller pressed ${digits.split("").join(" ")} on the phone keypad.)`;
}
