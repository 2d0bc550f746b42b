import { ProviderError, type ProviderErrorOptions } from "../../provider-error.js";

/**
 * An ElevenLabs speech request that failed. `status` is the server's HTTP status, or null when
 * no answer came (connection refused or reset, no audio in time) or the request was refused
 * before it was sent (an unknown voice); `retryable` says whether asking again may work.
 * Messages never carry the API key.
 */
export class ElevenLabsError extends ProviderError {
  override readonly name = "ElevenLabsError";
  override readonly stage = "tts" as const;
  override readonly provider = "elevenlabs";
  constructor(message: string, options: ProviderErrorOptions & { status: number | null }) {
    super(message, options);
  }
}
