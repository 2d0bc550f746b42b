import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";
import type { ChatErrorCode } from "../chat-error-codes.js";

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
  readonly code: ChatErrorCode;

  constructor(code: ChatErrorCode, message: string, options: ProviderErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
