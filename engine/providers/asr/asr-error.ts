import { ProviderError } from "../provider-error.js";

/** Why speech recognition failed; the single source of the `AsrError` codes. */
export const ASR_ERROR_CODES = [
  /** Every recognizer is serving a call and none was freed in time. */
  "capacity_exhausted",
  /** The recognizer died during an utterance (it is replaced for the session's next one). */
  "recognizer_crashed",
  /** The recognizer cannot start: binary or model missing, or it failed while loading. */
  "recognizer_unavailable",
  /** The recognizer reported a decoding failure for the utterance. */
  "recognition_failed",
  /** Audio the provider cannot take (sample rate). */
  "unsupported_audio",
  "unsupported_language",
  /** The provider or session was closed. */
  "closed",
] as const;

export type AsrErrorCode = (typeof ASR_ERROR_CODES)[number];

/** A speech recognition failure; `retryable` says whether trying again (another utterance or call) may work. */
export class AsrError extends ProviderError {
  override readonly name = "AsrError";
  override readonly stage = "asr" as const;
  readonly code: AsrErrorCode;

  constructor(code: AsrErrorCode, message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
