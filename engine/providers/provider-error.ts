/**
 * A failure of a speech or language provider, as LiveKit agents-js models it: `retryable` says
 * whether the same request may succeed when tried again (a rate limit, a server fault, a lost
 * connection, a crashed worker) or will fail the same way (a refused key, an unknown model, a
 * bad request). Each provider's errors extend this class; anything else a provider throws is a
 * bug, and the call session treats it as one.
 */
/** The pipeline stages a provider serves; the single source of their names. */
export const PROVIDER_STAGES = ["asr", "dialogue", "tts"] as const;
export type ProviderStage = (typeof PROVIDER_STAGES)[number];

export interface ProviderErrorOptions {
  retryable: boolean;
  retryAfterMs?: number | null;
  status?: number | null;
  cause?: unknown;
}

export class ProviderError extends Error {
  override readonly name: string = "ProviderError";
  /** The stage the failing provider serves (each subclass says); null for a bare ProviderError. */
  readonly stage: ProviderStage | null = null;
  /** The failing provider's name when the error class belongs to one provider; null when several share it (the session knows which). */
  readonly provider: string | null = null;
  readonly retryable: boolean;
  /** How long the provider asked to be left alone before the next try (HTTP `Retry-After`); null when it did not say. */
  readonly retryAfterMs: number | null;
  /** The HTTP status the service answered with; null when no answer came (refused, reset, nothing in time) or none applies. */
  readonly status: number | null;

  constructor(message: string, options: ProviderErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.status = options.status ?? null;
  }
}

/** A provider's failure that trying again may get past. */
export function isRetryable(error: unknown): error is ProviderError {
  return error instanceof ProviderError && error.retryable;
}

/**
 * Whether an HTTP status a provider answered with is worth the same request again: 408 (the
 * server gave up waiting), 429 (a rate limit) and 5xx (its own fault). Any other status is the
 * request's fault (a refused key, an unknown model, a bad body) and will fail the same way.
 * The one rule for every provider.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
