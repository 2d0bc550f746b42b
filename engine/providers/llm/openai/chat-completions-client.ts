import { RequestDeadline } from "../../request-deadline.js";
import { parseRetryAfter, retryBeforeFirstItem, type RetryPolicy } from "../../provider-retry.js";
import { isRetryableStatus } from "../../provider-error.js";
import { ChatCompletionsError } from "./chat-completions-error.js";
import type { ChatCompletionRequest } from "./chat-completions-wire.js";
import { parseChatChunk, type ChatStreamDelta } from "./chat-stream-delta.js";
import { readServerSentEvents } from "../server-sent-events.js";

/** How much of an error response is read for its message. */
const ERROR_BODY_LIMIT = 4096;

export interface ChatCompletionsClientConfig {
  /** The full `.../v1/chat/completions` URL. */
  endpoint: string;
  /** Sent as a Bearer token when set. */
  apiKey: string | null;
  /** Longest wait for the first byte of the streamed body. */
  timeoutMs: number;
  /** Retries of a request that failed retryably before its first delta. */
  retry: RetryPolicy;
}

/**
 * Streams chat completions from one OpenAI-compatible server. The API key lives in a private
 * field, so logging or serialising the client cannot print it, and is scrubbed from any error
 * text the server sends back.
 */
export class ChatCompletionsClient {
  readonly #endpoint: string;
  readonly #apiKey: string | null;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;

  constructor(config: ChatCompletionsClientConfig) {
    this.#endpoint = config.endpoint;
    this.#apiKey = config.apiKey;
    this.#timeoutMs = config.timeoutMs;
    this.#retry = config.retry;
  }

  /**
   * Sends `request` with `stream: true` and yields the reply's deltas as they arrive. A request
   * that fails retryably (429, 5xx, no connection, no byte in time) before its first delta is
   * sent again per the retry policy; after it, the reply is being spoken and is not. Ends
   * quietly when `signal` aborts (the caller gave up the turn; the connection is closed at
   * once); throws `ChatCompletionsError` on any failure.
   */
  stream(request: ChatCompletionRequest, signal: AbortSignal): AsyncGenerator<ChatStreamDelta> {
    return retryBeforeFirstItem(() => this.attempt(request, signal), this.#retry, signal);
  }

  /** One request. */
  private async *attempt(request: ChatCompletionRequest, signal: AbortSignal): AsyncGenerator<ChatStreamDelta> {
    if (signal.aborted) return;
    const deadline = new RequestDeadline(signal, this.#timeoutMs);
    // The reply's pace after its first byte is the consumer's.
    const firstByte = () => deadline.stopClock();
    const fail = (err: unknown): unknown => {
      if (err instanceof ChatCompletionsError) return err;
      if (deadline.timedOut) return new ChatCompletionsError("timeout", `chat completions server sent nothing within ${this.#timeoutMs} ms`, { retryable: true });
      return new ChatCompletionsError("network", `chat completions request to ${this.origin} failed: ${describe(err)}`, { retryable: true, cause: err });
    };

    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const response = await fetch(this.#endpoint, {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify({ ...request, stream: true }),
        signal: deadline.signal,
      });
      if (!response.ok) throw await this.httpError(response);
      if (!response.body) throw new ChatCompletionsError("invalid_response", "chat completions response has no body", { retryable: false });
      reader = response.body.getReader();
      for await (const data of readServerSentEvents(readAll(reader, firstByte))) {
        if (data === "[DONE]") return;
        yield parseChatChunk(data, (text) => this.redact(text));
      }
    } catch (err) {
      if (signal.aborted) return;
      throw fail(err);
    } finally {
      deadline.close();
      // Cut off before the end (abort, a consumer that stopped early): release the connection now.
      reader?.cancel().catch(() => undefined);
    }
  }

  private get origin(): string {
    return new URL(this.#endpoint).origin;
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    return headers;
  }

  private async httpError(response: Response): Promise<ChatCompletionsError> {
    const detail = serverMessage(await response.text().catch(() => ""));
    const message = `chat completions request failed with HTTP ${response.status}${detail ? `: ${this.redact(detail)}` : ""}`;
    return new ChatCompletionsError("http_status", message, {
      status: response.status,
      retryable: isRetryableStatus(response.status),
      retryAfterMs: parseRetryAfter(response.headers.get("retry-after")),
    });
  }

  /** A server may echo the key it refused (local servers do not mask it the way OpenAI does). */
  private redact(text: string): string {
    return this.#apiKey ? text.split(this.#apiKey).join("[api key]") : text;
  }
}

/** The byte chunks of a body; `onFirst` runs when the first one arrives. */
async function* readAll(reader: ReadableStreamDefaultReader<Uint8Array>, onFirst: () => void): AsyncGenerator<Uint8Array> {
  for (let first = true; ; first = false) {
    const { done, value } = await reader.read();
    if (first) onFirst();
    if (done) return;
    yield value;
  }
}

/** `error.message` of an OpenAI-style error body, else the start of the body as text. */
function serverMessage(body: string): string {
  const text = body.slice(0, ERROR_BODY_LIMIT);
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error: unknown = parsed.error;
      if (typeof error === "string") return error;
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message;
    }
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.trim().slice(0, 300);
}

/** fetch reports "fetch failed" and keeps the reason (ECONNREFUSED, ...) in `cause`. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause: unknown = err.cause;
  if (cause instanceof Error) return `${err.message} (${"code" in cause && typeof cause.code === "string" ? cause.code : cause.message})`;
  return err.message;
}
