import { KNOWLEDGE_SEARCH_TOOL, knowledgePassages, type ToolExecutor, type ToolResult } from "../../tools.js";
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
    const knowledge = await this.knowledgeFor(userText, signal);
    if (signal.aborted) return;
    let spoken = "";
    let ending: DialogueEvent | null = null;
    for (let round = 1; round <= MAX_ROUNDS_PER_TURN && ending === null; round++) {
      const request = this.request(knowledge);
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
        if (then) ending ??= endingOf(then);
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

  /** A supervisor's line the caller heard (`heardText` of it): the agent's own words from now on. */
  agentSaid(heardText: string): void {
    if (heardText.trim() !== "") this.history.push({ role: "assistant", content: heardText });
  }

  /** A supervisor's guidance: in the system message of every request for the rest of the call. */
  guide(text: string): void {
    this.history.addGuidance(text);
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

  /**
   * The passages of the agent's documents that match the caller's words, as a paragraph of the
   * system prompt for this turn's requests; "" when the agent has no knowledge base, the search
   * found nothing or failed (the model then answers as it would without).
   */
  private async knowledgeFor(userText: string, signal: AbortSignal): Promise<string> {
    if (!this.tools.definitions.some((t) => t.name === KNOWLEDGE_SEARCH_TOOL)) return "";
    const passages = knowledgePassages(await this.tools.execute(KNOWLEDGE_SEARCH_TOOL, { question: userText }, signal));
    if (passages.length === 0) return "";
    const quoted = passages.map((p, i) => `[${i + 1}] (${p.document_name}) ${p.text}`).join("\n");
    return `\n\nPassages from the business's documents that may answer the caller's last words. Answer from them when they do; when they do not, say you do not know rather than guess:\n${quoted}`;
  }

  private request(knowledge = ""): ChatCompletionRequest {
    const messages = this.history.forRequest();
    if (knowledge && messages[0]?.role === "system") messages[0] = { ...messages[0], content: `${messages[0].content}${knowledge}` };
    // The knowledge search is the session's own, each turn: not a tool the model calls.
    const offered = this.tools.definitions.filter((t) => t.name !== KNOWLEDGE_SEARCH_TOOL);
    return {
      model: this.model,
      messages,
      stream: true,
      temperature: this.agent.temperature,
      max_tokens: this.agent.maxTokens,
      ...(offered.length > 0 ? { tools: offered.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) } : {}),
    };
  }

  /** Runs one tool call; arguments that are not a JSON object (cut off by `max_tokens`, malformed) are refused unrun. */
  private run(call: ChatToolCall, signal: AbortSignal): Promise<ToolResult> {
    const args = parseArguments(call.function.arguments);
    if (!args) return Promise.resolve({ ok: false, error: "the arguments were not a valid JSON object" });
    return this.tools.execute(call.function.name, args, signal);
  }
}

/** The turn's end a tool's result asks for. */
function endingOf(then: NonNullable<Extract<ToolResult, { ok: true }>["then"]>): DialogueEvent {
  if (then === "transfer") return { type: "transfer" };
  if ("handoff" in then) return { type: "handoff", handoff: then.handoff };
  return { type: "end_call", reason: then.endCall };
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
