import { DEFAULT_RETRY_POLICY, retryCall, type RetryPolicy } from "../../provider-retry.js";
import type { AsrProvider, AsrSession } from "../asr-provider.js";
import { AsrError } from "../asr-error.js";
import { DeepgramConnection } from "./deepgram-connection.js";
import { DeepgramSession } from "./deepgram-session.js";

export interface DeepgramConfig {
  /**
   * Base URL of the service: `http(s)://` (used as `ws(s)://`) or `ws(s)://`, with an optional
   * path prefix. Default `https://api.deepgram.com`.
   */
  url?: string;
  /** Sent as `Authorization: Token <key>`; none for a local server that needs none. */
  apiKey?: string;
  /** Default `nova-2`. */
  model?: string;
  /** Default 5000. */
  connectTimeoutMs?: number;
  /** `KeepAlive` after this long without audio; the service closes a stream after ~10 s. Default 4000. */
  keepAliveMs?: number;
  /** How long the final may take after the end of an utterance's audio. Default 5000. */
  finalTimeoutMs?: number;
  /** Retries of a stream that failed to open retryably (5xx, network, timeout). Default DEFAULT_RETRY_POLICY. */
  retry?: RetryPolicy;
}

/** The configuration in force, without the key. */
export type DeepgramSettings = Readonly<Required<Omit<DeepgramConfig, "apiKey" | "url">> & { listenUrl: string }>;

const DEFAULT_URL = "https://api.deepgram.com";
const WEBSOCKET_PROTOCOLS: Record<string, string> = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" };

/** The `/v1/listen` address under `base`, on the WebSocket scheme that matches its own. */
function listenUrl(base: string): URL {
  let url: URL;
  try {
    url = new URL(base);
  } catch (cause) {
    throw new TypeError(`the Deepgram URL is not a URL: ${base}`, { cause });
  }
  const protocol = WEBSOCKET_PROTOCOLS[url.protocol];
  if (!protocol) throw new TypeError(`the Deepgram URL must be http(s) or ws(s), not ${url.protocol}`);
  url.protocol = protocol;
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/listen`;
  url.search = "";
  url.hash = "";
  return url;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`the Deepgram ${name} must be a positive number of ms, not ${value}`);
  return value;
}

/**
 * Speech recognition by a service that speaks Deepgram's live streaming protocol (Deepgram
 * itself, or a compatible server). One WebSocket per call, opened by `open()`; audio goes at
 * the transport's own rate as linear16. The service's endpointing is off: the engine ends
 * utterances with its own VAD and asks for each final with `Finalize`.
 */
export class DeepgramProvider implements AsrProvider {
  readonly name = "deepgram";
  readonly settings: DeepgramSettings;
  /** Kept apart from `settings`, so the key shows up in no dump of the provider. */
  readonly #authorization: string | undefined;

  constructor(config: DeepgramConfig = {}) {
    this.settings = Object.freeze({
      listenUrl: listenUrl(config.url ?? DEFAULT_URL).href,
      model: config.model ?? "nova-2",
      connectTimeoutMs: positive("connectTimeoutMs", config.connectTimeoutMs ?? 5000),
      keepAliveMs: positive("keepAliveMs", config.keepAliveMs ?? 4000),
      finalTimeoutMs: positive("finalTimeoutMs", config.finalTimeoutMs ?? 5000),
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    });
    this.#authorization = config.apiKey ? `Token ${config.apiKey}` : undefined;
  }

  /**
   * Opens the call's stream, retrying retryable failures per the retry policy; rejects with
   * `recognizer_unavailable` when it cannot (see `DeepgramConnection.connect`).
   */
  async open(options: { language: string; sampleRate: number; signal: AbortSignal }): Promise<AsrSession> {
    const { sampleRate } = options;
    if (!Number.isInteger(sampleRate) || sampleRate <= 0) {
      throw new AsrError("unsupported_audio", `the Deepgram stream needs a sample rate in Hz, not ${sampleRate}`, { retryable: false });
    }
    const url = new URL(this.settings.listenUrl);
    url.search = new URLSearchParams({
      encoding: "linear16",
      sample_rate: String(sampleRate),
      channels: "1",
      model: this.settings.model,
      language: options.language,
      interim_results: "true",
      punctuate: "true",
      endpointing: "false",
    }).toString();
    const headers: Record<string, string> = this.#authorization ? { Authorization: this.#authorization } : {};
    const { connectTimeoutMs, keepAliveMs, finalTimeoutMs, retry } = this.settings;
    // A stream refused by a service blip (5xx, reset, timeout) is asked for again, at the call's start and per utterance alike.
    const connect = (signal: AbortSignal) =>
      retryCall(() => DeepgramConnection.connect({ url: url.href, headers, connectTimeoutMs, keepAliveMs, signal }), retry, signal);
    return new DeepgramSession({ sampleRate, finalTimeoutMs, connect }, await connect(options.signal));
  }
}
