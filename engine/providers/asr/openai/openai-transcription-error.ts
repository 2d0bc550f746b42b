import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";

/**
 * A transcription request that failed. `status` is the server's HTTP status, or null when no
 * usable answer came (connection refused or reset, nothing in time, an answer that is not a
 * transcription); `retryable` follows isRetryableStatus for statuses. Messages never carry the
 * API key.
 */
export class OpenAiTranscriptionError extends ProviderError {
  override readonly name = "OpenAiTranscriptionError";
  override readonly stage = "asr" as const;
  override readonly provider = "openai";
  constructor(message: string, options: ProviderErrorOptions & { status: number | null }) {
    super(message, options);
  }
}
