import { fillTemplate } from "../../../text/template.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../../provider-retry.js";
import { ChatDialogueSession } from "../chat-dialogue-session.js";
import type { DialogueProvider, DialogueSession } from "../dialogue-provider.js";
import { ChatHistory } from "../openai/chat-history.js";
import { systemPrompt } from "../system-prompt.js";
import { MessagesClient } from "./messages-client.js";

/** Messages kept besides the system prompt: about twenty exchanges. */
const HISTORY_LIMIT = 40;

export interface AnthropicDialogueConfig {
  /** The API's base URL; `/v1/messages` is appended (a path prefix kept). Default `https://api.anthropic.com`. */
  url?: string;
  /** Sent as `x-api-key`; a proxy that adds it needs none. Never logged nor put in errors. */
  apiKey?: string | null;
  /** The agent's model name (`llm-large`, `llm-small`, `llm-alt`) -> Anthropic's model id. Unmapped names are sent as they are. */
  models: Readonly<Record<string, string>>;
  /** Longest wait for the first byte of a reply, and between later bytes, in ms. Default 10000. */
  requestTimeoutMs?: number;
  /** Retries of a request that fails retryably before the reply starts. Default `DEFAULT_RETRY_POLICY`. */
  retry?: RetryPolicy;
  /** "Today" for the system prompt; tests fix it. Default: the system clock. */
  now?: () => Date;
}

/**
 * Dialogue through the Anthropic Messages API, streamed, with the tools the control plane
 * gives each call. The turn loop, history and barge-in handling are ChatDialogueSession's,
 * shared with the OpenAI provider; MessagesClient speaks Anthropic's wire format.
 */
export class AnthropicDialogueProvider implements DialogueProvider {
  readonly name = "anthropic";
  // Private fields: logging the provider must not print the key.
  readonly #config: Readonly<{ models: Readonly<Record<string, string>>; now: () => Date }>;
  readonly #client: MessagesClient;

  constructor(config: AnthropicDialogueConfig) {
    const timeoutMs = config.requestTimeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new Error(`anthropic dialogue: requestTimeoutMs must be a positive integer, got ${timeoutMs}`);
    this.#config = Object.freeze({ models: Object.freeze({ ...config.models }), now: config.now ?? (() => new Date()) });
    this.#client = new MessagesClient({
      endpoint: messagesEndpoint(config.url ?? "https://api.anthropic.com"),
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

/** `{url}/v1/messages`, keeping any path prefix of the base (a proxy's); credentials belong in apiKey, not the URL. */
function messagesEndpoint(base: string): URL {
  let url: URL;
  try {
    url = new URL(base.endsWith("/") ? base : `${base}/`);
  } catch {
    throw new Error(`anthropic dialogue: url is not a URL: ${base}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`anthropic dialogue: url must be http or https, got ${url.protocol}`);
  if (url.username || url.password) throw new Error("anthropic dialogue: put credentials in apiKey, not in the url");
  return new URL("v1/messages", url);
}
