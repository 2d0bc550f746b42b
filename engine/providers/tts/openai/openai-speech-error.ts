import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";

/**
 * A speech request that failed. `status` is the server's HTTP status, or null when no answer
 * came (connection refused or reset, no audio in time); `retryable` says whether asking again
 * may work. Messages never carry the API key.
 */
export class OpenAiSpeechError extends ProviderError {
  override readonly name = "OpenAiSpeechError";
  override readonly stage = "tts" as const;
  override readonly provider = "openai";
  constructor(message: string, options: ProviderErrorOptions & { status: number | null }) {
    super(message, options);
  }
}
