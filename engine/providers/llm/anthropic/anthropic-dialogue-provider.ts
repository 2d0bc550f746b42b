import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../../provider-retry.js";
import { ChatDialogueProvider, chatRequestTimeoutMs, type ChatModelOptions } from "../chat-dialogue-provider.js";
import { MessagesClient } from "./messages-client.js";

export interface AnthropicDialogueConfig extends ChatModelOptions {
  /** The API's base URL; `/v1/messages` is appended (a path prefix kept). Default `https://api.anthropic.com`. */
  url?: string;
  /** Sent as `x-api-key`; a proxy that adds it needs none. Never logged nor put in errors. */
  apiKey?: string | null;
  /** Longest wait for the first byte of a reply, and between later bytes, in ms. Default 10000. */
  requestTimeoutMs?: number;
  /** Retries of a request that fails retryably before the reply starts. Default `DEFAULT_RETRY_POLICY`. */
  retry?: RetryPolicy;
}

/**
 * Dialogue through the Anthropic Messages API, streamed, with the tools the control plane
 * gives each call. The turn loop, history and barge-in handling are ChatDialogueSession's,
 * shared with the OpenAI provider; MessagesClient speaks Anthropic's wire format.
 */
export class AnthropicDialogueProvider extends ChatDialogueProvider {
  constructor(config: AnthropicDialogueConfig) {
    const client = new MessagesClient({
      endpoint: messagesEndpoint(config.url ?? "https://api.anthropic.com"),
      apiKey: config.apiKey || null,
      timeoutMs: chatRequestTimeoutMs("anthropic", config.requestTimeoutMs),
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    });
    super("anthropic", client, config);
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
