import type { AgentSettings } from "../../../types.js";
import type { DialogueEvent, DialogueSession } from "../dialogue-provider.js";
import type { ChatCompletionsClient } from "./chat-completions-client.js";
import type { AssistantMessage, ChatCompletionRequest, ChatTool } from "./chat-completions-wire.js";
import type { ChatHistory } from "./chat-history.js";
import { ToolCallAssembler } from "./tool-call-assembler.js";
import { toolCallOutcome } from "./tool-call-outcome.js";

/** Requests per caller turn: the reply, and after tool results up to two more (a booking, then its confirmation). */
export const MAX_ROUNDS_PER_TURN = 3;

/**
 * One call with a chat-completions model. Each caller turn sends the history and streams the
 * reply's text as it arrives. Tool calls are acted on when their request finishes: a booking
 * is reported and answered with a tool result, then the model is asked again so it can speak
 * the confirmation; a transfer or hang-up ends the turn.
 */
export class OpenAiDialogueSession implements DialogueSession {
  constructor(
    private readonly client: ChatCompletionsClient,
    private readonly history: ChatHistory,
    private readonly agent: AgentSettings,
    private readonly model: string,
    private readonly tools: readonly ChatTool[],
  ) {}

  async *respond(userText: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
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
      const events: DialogueEvent[] = [];
      let answered = false;
      for (const call of toolCalls) {
        const outcome = toolCallOutcome(call, this.agent);
        this.history.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(outcome.result) });
        if (outcome.endsTurn) ending ??= outcome.event;
        else {
          if (outcome.event) events.push(outcome.event);
          answered = true;
        }
      }
      yield* events;
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

  private request(): ChatCompletionRequest {
    return {
      model: this.model,
      messages: this.history.forRequest(),
      stream: true,
      temperature: this.agent.temperature,
      max_tokens: this.agent.maxTokens,
      tools: [...this.tools],
    };
  }
}
