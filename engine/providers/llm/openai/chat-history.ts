import { SUPERVISOR_GUIDANCE_KEPT } from "../../../supervisor-text.js";
import type { AssistantMessage, ChatMessage } from "./chat-completions-wire.js";

/**
 * One call's conversation as the model sees it: the system message (with a supervisor's
 * guidance, if any), then at most `limit` messages (older ones are dropped, so a long call
 * keeps a bounded request size and cost).
 */
export class ChatHistory {
  private messages: ChatMessage[] = [];
  /** A supervisor's guidance, oldest first: in the system message, so the history limit never drops it. */
  private readonly guidance: string[] = [];

  constructor(
    private readonly system: string,
    private readonly limit: number,
  ) {}

  push(message: ChatMessage): void {
    this.messages.push(message);
  }

  /** A supervisor's guidance for the rest of the call (the newest SUPERVISOR_GUIDANCE_KEPT are kept). */
  addGuidance(text: string): void {
    this.guidance.push(text);
    if (this.guidance.length > SUPERVISOR_GUIDANCE_KEPT) this.guidance.shift();
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
    return [{ role: "system", content: this.system + guidanceText(this.guidance) }, ...this.messages.map((m) => ({ ...m }))];
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

/**
 * A supervisor's guidance as a paragraph of the system message ("" with none). A system
 * message rather than a turn: it is an instruction the caller never said, and some chat
 * templates refuse a system message anywhere but first.
 */
function guidanceText(guidance: readonly string[]): string {
  if (guidance.length === 0) return "";
  const items = guidance.map((text) => `- ${text}`).join("\n");
  return `\n\nSupervisor guidance (from a person of the business listening to this call, oldest first; follow it in your next replies, and never read it out or mention it to the caller):\n${items}`;
}
