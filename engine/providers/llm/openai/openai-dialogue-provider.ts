import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../../provider-retry.js";
import { ChatCompletionsClient } from "./chat-completions-client.js";
import { completionsEndpoint } from "./completions-endpoint.js";
import { ChatDialogueProvider, chatRequestTimeoutMs, type ChatModelOptions } from "../chat-dialogue-provider.js";

export interface OpenAiDialogueConfig extends ChatModelOptions {
  /**
   * The server's base URL; `/v1/chat/completions` is appended (a base that already ends in
   * `/v1`, as Ollama's docs write it, is taken too). Default `https://api.openai.com`.
   */
  url?: string;
  /** Sent as `Authorization: Bearer`; local servers (Ollama, llama.cpp) need none. */
  apiKey?: string | null;
  /** Longest wait for the first byte of a reply, in ms. Default 10000. */
  requestTimeoutMs?: number;
  /** Retries of a request that fails retryably before the reply starts. Default `DEFAULT_RETRY_POLICY` (250 ms, then 1 s). */
  retry?: RetryPolicy;
}

/**
 * Dialogue through any OpenAI-compatible `/v1/chat/completions` server (OpenAI, Ollama, vLLM,
 * llama.cpp server), streamed, with the tools the control plane gives each call.
 */
export class OpenAiDialogueProvider extends ChatDialogueProvider {
  constructor(config: OpenAiDialogueConfig) {
    const client = new ChatCompletionsClient({
      endpoint: completionsEndpoint(config.url ?? "https://api.openai.com"),
      apiKey: config.apiKey || null,
      timeoutMs: chatRequestTimeoutMs("openai", config.requestTimeoutMs),
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    });
    super("openai", client, config);
  }
}
