import { fillTemplate } from "../../text/template.js";
import { ChatDialogueSession, type ChatStreamSource } from "./chat-dialogue-session.js";
import type { DialogueOpenOptions, DialogueProvider, DialogueSession } from "./dialogue-provider.js";
import { ChatHistory } from "./openai/chat-history.js";
import { systemPrompt } from "./system-prompt.js";

/** Messages kept besides the system message: about twenty exchanges. */
const HISTORY_LIMIT = 40;
/** Told to a model that takes a call over from another agent (its history holds that agent's words). */
const HANDOFF_NOTE = "Another agent of the business talked with the caller first and passed the call to you; the conversation so far follows. Go on from there without asking again for what the caller already said.";
/** Longest wait for the first byte of a reply (and between later bytes) unless configured. */
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export interface ChatModelOptions {
  /** The agent's model name (`llm-large`, `llm-small`, `llm-alt`) -> the service's model id. Unmapped names are sent as they are. */
  models: Readonly<Record<string, string>>;
  /** "Today" for the system message; tests fix it. Default: the system clock. */
  now?: () => Date;
}

/** `requestTimeoutMs` as configured, checked (default 10000). */
export function chatRequestTimeoutMs(provider: string, value: number | undefined): number {
  const timeoutMs = value ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new Error(`${provider} dialogue: requestTimeoutMs must be a positive integer, got ${timeoutMs}`);
  return timeoutMs;
}

/**
 * A dialogue through a chat model service, whatever its wire format (the `source`): each call
 * gets a ChatDialogueSession with the agent's system message, its greeting as the first
 * assistant message, and the model its agent's model name maps to.
 */
export class ChatDialogueProvider implements DialogueProvider {
  // Private fields: logging the provider must not print the client's key.
  readonly #models: Readonly<Record<string, string>>;
  readonly #now: () => Date;
  readonly #source: ChatStreamSource;

  constructor(
    readonly name: string,
    source: ChatStreamSource,
    options: ChatModelOptions,
  ) {
    this.#source = source;
    this.#models = Object.freeze({ ...options.models });
    this.#now = options.now ?? (() => new Date());
  }

  open({ agent, context, tools, history: before = [] }: DialogueOpenOptions): DialogueSession {
    const prompt = systemPrompt(agent, context, this.#now());
    const history = new ChatHistory(before.length > 0 ? `${prompt}\n\n${HANDOFF_NOTE}` : prompt, HISTORY_LIMIT);
    // A hand-off: the conversation so far, as the model would have had it (the other agent's words as its own turns).
    for (const segment of before) history.push({ role: segment.role === "user" ? "user" : "assistant", content: segment.content });
    // The call session speaks the first message itself; the model must know it was said.
    const greeting = agent.firstMessage ? fillTemplate(agent.firstMessage, { ...agent.metadata, ...context }) : "";
    if (greeting) history.push({ role: "assistant", content: greeting });
    const model = this.#models[agent.model] ?? agent.model;
    return new ChatDialogueSession(this.#source, history, agent, model, tools);
  }
}
