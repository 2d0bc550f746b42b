import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";
import type { ChatErrorCode } from "../chat-error-codes.js";

/**
 * A failed Anthropic Messages request. `retryable` follows isRetryableStatus (408, 429, 5xx,
 * 529 overloaded included) for an HTTP status or the status an in-stream error type stands
 * for; a lost connection or a timeout is retryable too. Messages never carry the API key.
 */
export class AnthropicError extends ProviderError {
  override readonly name = "AnthropicError";
  override readonly stage = "dialogue" as const;
  override readonly provider = "anthropic";
  readonly code: ChatErrorCode;

  constructor(code: ChatErrorCode, message: string, options: ProviderErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
