import type { AssistantMessage, ChatMessage } from "./chat-completions-wire.js";

/**
 * One call's conversation as the model sees it: the system message, then at most `limit`
 * messages (older ones are dropped, so a long call keeps a bounded request size and cost).
 */
export class ChatHistory {
  private messages: ChatMessage[] = [];

  constructor(
    private readonly system: string,
    private readonly limit: number,
  ) {}

  push(message: ChatMessage): void {
    this.messages.push(message);
  }

  /** The newest message, if any. */
  last(): ChatMessage | undefined {
    return this.messages.at(-1);
  }

  /** Takes out `message` (an assistant reply that came to nothing). */
  remove(message: ChatMessage): void {
    const index = this.messages.indexOf(message);
    if (index >= 0) this.messages.splice(index, 1);
  }

  /**
   * The messages for the next request, copied (later edits do not reach a request already
   * sent). Trims the stored history first, never leaving a tool result without the assistant
   * message that called the tool: servers refuse that.
   */
  forRequest(): ChatMessage[] {
    if (this.messages.length > this.limit) this.messages = this.messages.slice(-this.limit);
    while (this.messages[0]?.role === "tool") this.messages.shift();
    return [{ role: "system", content: this.system }, ...this.messages.map((m) => ({ ...m }))];
  }

  /**
   * The caller heard only `heardText` of the agent's last turn (a barge-in). A turn with tool
   * calls spans several assistant messages, so the heard words are handed out to them in
   * order; a message left with no words and no tool calls is dropped.
   */
  truncateLastReply(heardText: string): void {
    const lastUser = this.messages.findLastIndex((m) => m.role === "user");
    const replies = this.messages.slice(lastUser + 1).filter((m): m is AssistantMessage => m.role === "assistant");
    let heard = words(heardText);
    replies.forEach((reply, i) => {
      const said = words(reply.content ?? "").length;
      const kept = i === replies.length - 1 ? heard : heard.slice(0, said);
      heard = heard.slice(kept.length);
      if (said === 0 && kept.length === 0) return;
      if (kept.length > 0) reply.content = kept.join(" ");
      else if (reply.tool_calls) reply.content = null;
      else this.remove(reply);
    });
  }
}

function words(text: string): string[] {
  return text.split(/\s+/).filter((w) => w !== "");
}
