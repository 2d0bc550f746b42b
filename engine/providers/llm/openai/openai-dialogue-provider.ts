import { fillTemplate } from "../../../text/template.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../../provider-retry.js";
import type { DialogueProvider, DialogueSession } from "../dialogue-provider.js";
import { ChatCompletionsClient } from "./chat-completions-client.js";
import { ChatHistory } from "./chat-history.js";
import { completionsEndpoint } from "./completions-endpoint.js";
import { ChatDialogueSession } from "../chat-dialogue-session.js";
import { systemPrompt } from "../system-prompt.js";

/** Messages kept besides the system message: about twenty exchanges. */
const HISTORY_LIMIT = 40;

export interface OpenAiDialogueConfig {
  /**
   * The server's base URL; `/v1/chat/completions` is appended (a base that already ends in
   * `/v1`, as Ollama's docs write it, is taken too). Default `https://api.openai.com`.
   */
  url?: string;
  /** Sent as `Authorization: Bearer`; local servers (Ollama, llama.cpp) need none. */
  apiKey?: string | null;
  /** The agent's model name (`llm-large`, `llm-small`, `llm-alt`) -> the server's model id. Unmapped names are sent as they are. */
  models: Readonly<Record<string, string>>;
  /** Longest wait for the first byte of a reply, in ms. Default 10000. */
  requestTimeoutMs?: number;
  /** Retries of a request that fails retryably before the reply starts. Default `DEFAULT_RETRY_POLICY` (250 ms, then 1 s). */
  retry?: RetryPolicy;
  /** "Today" for the system message; tests fix it. Default: the system clock. */
  now?: () => Date;
}

/**
 * Dialogue through any OpenAI-compatible `/v1/chat/completions` server (OpenAI, Ollama, vLLM,
 * llama.cpp server), streamed, with the tools the control plane gives each call.
 */
export class OpenAiDialogueProvider implements DialogueProvider {
  readonly name = "openai";
  // Private fields: logging the provider must not print the key.
  readonly #config: Readonly<{ models: Readonly<Record<string, string>>; now: () => Date }>;
  readonly #client: ChatCompletionsClient;

  constructor(config: OpenAiDialogueConfig) {
    const timeoutMs = config.requestTimeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new Error(`openai dialogue: requestTimeoutMs must be a positive integer, got ${timeoutMs}`);
    this.#config = Object.freeze({ models: Object.freeze({ ...config.models }), now: config.now ?? (() => new Date()) });
    this.#client = new ChatCompletionsClient({
      endpoint: completionsEndpoint(config.url ?? "https://api.openai.com"),
      apiKey: config.apiKey || null,
      timeoutMs,
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    });
  }

  open({ agent, context, tools }: Parameters<DialogueProvider["open"]>[0]): DialogueSession {
    const history = new ChatHistory(systemPrompt(agent, context, this.#config.now()), HISTORY_LIMIT);
    // The call session speaks the first message itself; the model must know it was said.
    const greeting = agent.firstMessage ? fillTemplate(agent.firstMessage, { ...agent.metadata, ...context }) : "";
    if (greeting) history.push({ role: "assistant", content: greeting });
    const model = this.#config.models[agent.model] ?? agent.model;
    return new ChatDialogueSession(this.#client, history, agent, model, tools);
  }
}
