import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";

/** Why a Messages request failed; the single source of the `AnthropicError` codes. */
export const ANTHROPIC_ERROR_CODES = [
  /** The server answered with an HTTP error status (see `status`). */
  "http_status",
  /** No connection, or the connection broke (a stream ending before `message_stop` too). */
  "network",
  /** No byte within `requestTimeoutMs`, first or between later ones. */
  "timeout",
  /** The server sent an `error` event inside the stream (e.g. `overloaded_error`). */
  "stream_error",
  /** The server sent something that is not a Messages stream. */
  "invalid_response",
] as const;

export type AnthropicErrorCode = (typeof ANTHROPIC_ERROR_CODES)[number];

/**
 * A failed Anthropic Messages request. `retryable` follows isRetryableStatus (408, 429, 5xx,
 * 529 overloaded included) for an HTTP status or the status an in-stream error type stands
 * for; a lost connection or a timeout is retryable too. Messages never carry the API key.
 */
export class AnthropicError extends ProviderError {
  override readonly name = "AnthropicError";
  override readonly stage = "dialogue" as const;
  override readonly provider = "anthropic";
  readonly code: AnthropicErrorCode;
  constructor(code: AnthropicErrorCode, message: string, options: ProviderErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
