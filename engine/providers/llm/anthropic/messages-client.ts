import { RequestDeadline } from "../../request-deadline.js";
import { request } from "undici";
import type { ChatCompletionRequest } from "../openai/chat-completions-wire.js";
import type { ChatStreamDelta } from "../openai/chat-stream-delta.js";
import { isRetryableStatus } from "../../provider-error.js";
import { parseRetryAfter, retryBeforeFirstItem, type RetryPolicy } from "../../provider-retry.js";
import { readServerSentEvents } from "../server-sent-events.js";
import { AnthropicError } from "./anthropic-error.js";
import { messagesRequest } from "./anthropic-messages.js";
import { MESSAGE_STOP, parseStreamEvent } from "./messages-stream-event.js";

/** The API version Parley speaks (sent as `anthropic-version`). */
export const ANTHROPIC_VERSION = "2023-06-01";
/** Enough of an error body to quote the server's message. */
const ERROR_BODY_LIMIT = 4096;
const ERROR_MESSAGE_LIMIT = 300;

export interface MessagesClientConfig {
  /** The full `.../v1/messages` URL. */
  endpoint: URL;
  /** Sent as `x-api-key` when set. */
  apiKey: string | null;
  /** Longest wait for the first byte of the answer, and between later bytes of the stream. */
  timeoutMs: number;
  /** Retries of a request that failed retryably before its first delta. */
  retry: RetryPolicy;
}

/**
 * Streams replies from the Anthropic Messages API (`POST /v1/messages`, `stream: true`), taking
 * and giving the shared chat forms (the request ChatDialogueSession builds, the deltas it
 * reads), so the session's tool loop, history and barge-in handling serve both providers. The
 * API key lives in a private field and is scrubbed from any text the server sends back.
 */
export class MessagesClient {
  readonly #endpoint: URL;
  readonly #apiKey: string | null;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;

  constructor(config: MessagesClientConfig) {
    this.#endpoint = config.endpoint;
    this.#apiKey = config.apiKey;
    this.#timeoutMs = config.timeoutMs;
    this.#retry = config.retry;
  }

  /**
   * Yields the reply's text and tool-call pieces as they arrive. A request that fails
   * retryably (408, 429, 5xx and 529, an in-stream `overloaded_error`, no connection, no byte
   * in time) before its first piece is sent again per the retry policy; after it, the reply is
   * being spoken and is not. Ends quietly when `signal` aborts (the connection is closed at
   * once); throws `AnthropicError` on any failure.
   */
  stream(request: ChatCompletionRequest, signal: AbortSignal): AsyncGenerator<ChatStreamDelta> {
    const body = JSON.stringify(messagesRequest(request));
    return retryBeforeFirstItem(() => this.attempt(body, signal), this.#retry, signal);
  }

  /** One request. */
  private async *attempt(body: string, signal: AbortSignal): AsyncGenerator<ChatStreamDelta> {
    if (signal.aborted) return;
    // Also cut when the consumer stops early: the connection must not stay busy streaming.
    const deadline = new RequestDeadline(signal, this.#timeoutMs);
    try {
      const response = await request(this.#endpoint, {
        method: "POST",
        headers: this.headers(),
        body,
        signal: deadline.signal,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      if (response.statusCode < 200 || response.statusCode > 299) throw await this.httpError(response);
      const chunks = async function* (): AsyncGenerator<Uint8Array> {
        for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
          // Later bytes are bounded by undici's bodyTimeout.
          deadline.stopClock();
          yield bytes;
        }
      };
      for await (const data of readServerSentEvents(chunks())) {
        const piece = parseStreamEvent(data, (text) => this.redact(text));
        if (piece === MESSAGE_STOP) return;
        if (piece) yield piece;
      }
      throw new AnthropicError("network", `anthropic messages stream from ${this.#endpoint.origin} ended before message_stop`, { retryable: true });
    } catch (error) {
      if (signal.aborted) return;
      throw this.asError(error, deadline.timedOut);
    } finally {
      deadline.close();
    }
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream", "anthropic-version": ANTHROPIC_VERSION };
    if (this.#apiKey) headers["x-api-key"] = this.#apiKey;
    return headers;
  }

  private async httpError(response: Awaited<ReturnType<typeof request>>): Promise<AnthropicError> {
    const detail = this.redact(await errorDetail(response.body as AsyncIterable<Uint8Array>).catch(() => ""));
    const retryAfter = response.headers["retry-after"];
    return new AnthropicError("http_status", `anthropic messages request failed with HTTP ${response.statusCode}${detail ? `: ${detail}` : ""}`, {
      status: response.statusCode,
      retryable: isRetryableStatus(response.statusCode),
      retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
    });
  }

  private asError(error: unknown, timedOut: boolean): AnthropicError {
    if (error instanceof AnthropicError) return error;
    const code = error instanceof Error && "code" in error ? String(error.code) : "";
    if (timedOut || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
      return new AnthropicError("timeout", `anthropic messages server ${this.#endpoint.origin} sent nothing for ${this.#timeoutMs} ms`, { retryable: true, cause: error });
    }
    const reason = error instanceof Error ? `${error.message}${code ? ` (${code})` : ""}` : String(error);
    return new AnthropicError("network", `anthropic messages request to ${this.#endpoint.origin} failed: ${this.redact(reason)}`, { retryable: true, cause: error });
  }

  /** A proxy or stand-in may echo the key it refused. */
  private redact(text: string): string {
    return this.#apiKey ? text.replaceAll(this.#apiKey, "[api key]") : text;
  }
}

/** `{type:"error", error:{type, message}}` as "type: message", else the start of the body. */
async function errorDetail(body: AsyncIterable<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const bytes of body) {
    text += decoder.decode(bytes, { stream: true });
    if (text.length >= ERROR_BODY_LIMIT) break;
  }
  let message = text.trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed && typeof parsed.error === "object" && parsed.error !== null) {
      const error = parsed.error as Record<string, unknown>;
      if (typeof error.message === "string") message = typeof error.type === "string" ? `${error.type}: ${error.message}` : error.message;
    }
  } catch {
    // Not JSON: the text itself.
  }
  return message.length > ERROR_MESSAGE_LIMIT ? `${message.slice(0, ERROR_MESSAGE_LIMIT)}...` : message;
}
