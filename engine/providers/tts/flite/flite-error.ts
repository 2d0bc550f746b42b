import { ProviderError } from "../../provider-error.js";

/**
 * The embedded TTS could not render an utterance. Retryable when its worker died (the pool
 * starts another for the next utterance); not when Flite itself refused the utterance, or the
 * pool is closed or has no worker left.
 */
export class FliteError extends ProviderError {
  override readonly name = "FliteError";
  override readonly stage = "tts" as const;
  override readonly provider = "flite";
}
