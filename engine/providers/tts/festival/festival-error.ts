import { ProviderError } from "../../provider-error.js";

/**
 * Festival could not say a sentence. Retryable when its process died or stopped answering (the
 * pool starts another for the next sentence); not when Festival is missing, refused the
 * sentence, or the provider is closed.
 */
export class FestivalError extends ProviderError {
  override readonly name = "FestivalError";
  override readonly stage = "tts" as const;
  override readonly provider = "festival";
}
