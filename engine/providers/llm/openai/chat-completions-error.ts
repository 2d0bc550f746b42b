import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";

/** Why a chat-completions request failed; the single source of the `ChatCompletionsError` codes. */
export const CHAT_COMPLETIONS_ERROR_CODES = [
  /** The server answered with an HTTP error status (see `status`). */
  "http_status",
  /** No connection, or the connection broke. */
  "network",
  /** No response byte within `requestTimeoutMs`. */
  "timeout",
  /** The server reported an error inside the stream. */
  "stream_error",
  /** The server sent something that is not a chat-completions stream. */
  "invalid_response",
] as const;

export type ChatCompletionsErrorCode = (typeof CHAT_COMPLETIONS_ERROR_CODES)[number];

/**
 * A failed dialogue request. `retryable` says whether the same request may succeed later
 * (isRetryableStatus: 408, 429, 5xx; network, timeout) or will fail again as it is (other 4xx:
 * key, model, body).
 * Messages never carry the API key.
 */
export class ChatCompletionsError extends ProviderError {
  override readonly name = "ChatCompletionsError";
  override readonly stage = "dialogue" as const;
  override readonly provider = "openai";
  readonly code: ChatCompletionsErrorCode;
  constructor(code: ChatCompletionsErrorCode, message: string, options: ProviderErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
