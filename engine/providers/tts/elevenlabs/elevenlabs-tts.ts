import { RequestDeadline } from "../../request-deadline.js";
import { request } from "undici";
import type { AudioFrame } from "../../../audio/audio-frame.js";
import { isRetryableStatus } from "../../provider-error.js";
import { DEFAULT_RETRY_POLICY, parseRetryAfter, type RetryPolicy } from "../../provider-retry.js";
import { errorBodyText } from "../error-body-text.js";
import { Pcm16ChunkDecoder } from "../pcm16-chunk-decoder.js";
import { speakSentences } from "../sentence-speech.js";
import type { SpeechChunk, TtsProvider } from "../tts-provider.js";
import type { VoiceInfo } from "../voice.js";
import { ElevenLabsError } from "./elevenlabs-error.js";
import { DEFAULT_ELEVENLABS_VOICES, elevenLabsVoices, parseElevenLabsVoices, type ElevenLabsVoice } from "./elevenlabs-voices.js";

/** The PCM rates asked for (`output_format=pcm_<rate>`); the single source of the allowed values. */
export const ELEVENLABS_SAMPLE_RATES = [16_000, 22_050, 24_000] as const;
const ERROR_MESSAGE_LIMIT = 300;

export interface ElevenLabsTtsConfig {
  /** Server base URL; requests go to `{url}/v1/text-to-speech/{voice_id}/stream`. Default `https://api.elevenlabs.io`. */
  url?: string;
  /** Sent as `xi-api-key`. Never logged nor put in errors. */
  apiKey?: string;
  /** Sent as `model_id`. Default `eleven_flash_v2_5` (ElevenLabs' low-latency model). */
  model?: string;
  /** `name=voice_id` pairs, comma-separated; offered as `elevenlabs-<name>`. Default: a few premade voices. */
  voices?: string;
  /** Rate of the PCM asked for: 16000 (default), 22050 or 24000 Hz. */
  sampleRate?: number;
  /** Time allowed from sending a request to its first audio byte, and between later bytes. Default 10000. */
  requestTimeoutMs?: number;
  /** Retries of a sentence's request that fails retryably before its first audio. Default `DEFAULT_RETRY_POLICY`. */
  retry?: RetryPolicy;
}

interface ResolvedConfig {
  url: string;
  model: string;
  voices: readonly ElevenLabsVoice[];
  sampleRate: number;
  requestTimeoutMs: number;
  retry: RetryPolicy;
}

/**
 * TTS through ElevenLabs' streaming HTTP API: each input piece (the call session sends
 * sentences) is one `POST /v1/text-to-speech/{voice_id}/stream?output_format=pcm_<rate>` with
 * `{text, model_id}`, answered with raw PCM16 little-endian mono in chunks; its audio is
 * yielded as it streams in. Sentences are fetched one ahead and yielded in order
 * (sentence-speech.ts), as OpenAI-compatible speech is.
 */
export class ElevenLabsTts implements TtsProvider {
  readonly name = "elevenlabs";
  private readonly config: Readonly<ResolvedConfig>;
  // A #private field: not enumerable, so logging the provider never prints the key.
  readonly #apiKey: string | undefined;
  private readonly base: URL;
  private readonly voiceList: readonly VoiceInfo[];

  constructor(config: ElevenLabsTtsConfig = {}) {
    const resolved: ResolvedConfig = {
      url: config.url || "https://api.elevenlabs.io",
      model: config.model ?? "eleven_flash_v2_5",
      voices: parseElevenLabsVoices(config.voices || DEFAULT_ELEVENLABS_VOICES),
      sampleRate: config.sampleRate ?? 16_000,
      requestTimeoutMs: config.requestTimeoutMs ?? 10_000,
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    };
    this.base = baseUrl(resolved.url);
    if (!resolved.model.trim()) throw new Error("ElevenLabsTts needs a model id");
    if (!(ELEVENLABS_SAMPLE_RATES as readonly number[]).includes(resolved.sampleRate)) {
      throw new Error(`ElevenLabsTts needs a sampleRate of ${ELEVENLABS_SAMPLE_RATES.join(", ")} Hz, not ${resolved.sampleRate}`);
    }
    if (!Number.isInteger(resolved.requestTimeoutMs) || resolved.requestTimeoutMs < 1) {
      throw new Error(`ElevenLabsTts needs a requestTimeoutMs of at least 1 ms, not ${resolved.requestTimeoutMs}`);
    }
    this.config = Object.freeze(resolved);
    this.#apiKey = config.apiKey || undefined;
    this.voiceList = elevenLabsVoices(resolved.voices, resolved.sampleRate);
  }

  voices(): readonly VoiceInfo[] {
    return this.voiceList;
  }

  async *synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const { voiceId, signal } = options;
    const index = this.voiceList.findIndex((v) => v.id === voiceId);
    const voice = this.config.voices[index];
    if (!voice) {
      throw new ElevenLabsError(`unknown ElevenLabs voice ${JSON.stringify(voiceId)}; configured voices: ${this.voiceList.map((v) => v.id).join(", ")}`, {
        status: null,
        retryable: false,
      });
    }
    const endpoint = this.endpoint(voice.voiceId);
    yield* speakSentences(text, { signal, retry: this.config.retry, speak: (input, signal) => this.request(endpoint, input, signal) });
  }

  /** `{url}/v1/text-to-speech/{voice_id}/stream?output_format=pcm_<rate>`, keeping any path prefix of the base. */
  private endpoint(voiceId: string): URL {
    const url = new URL(`v1/text-to-speech/${encodeURIComponent(voiceId)}/stream`, this.base);
    url.searchParams.set("output_format", `pcm_${this.config.sampleRate}`);
    return url;
  }

  /** One request for one sentence: its audio as the body streams in; ends quietly on abort. */
  private async *request(endpoint: URL, text: string, signal: AbortSignal): AsyncGenerator<AudioFrame> {
    const { model, requestTimeoutMs, sampleRate } = this.config;
    // One clock for the answer's first byte and each later one: a stream that stalls midway fails too.
    const deadline = new RequestDeadline(signal, requestTimeoutMs);
    try {
      const headers: Record<string, string> = { "content-type": "application/json", accept: "audio/pcm" };
      if (this.#apiKey) headers["xi-api-key"] = this.#apiKey;
      const response = await request(endpoint, {
        method: "POST",
        headers,
        body: JSON.stringify({ text, model_id: model }),
        signal: deadline.signal,
        // The deadline bounds both; undici's own would race it with a vaguer error.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const body = response.body as AsyncIterable<Uint8Array>;
      if (response.statusCode < 200 || response.statusCode > 299) {
        const detail = this.redact(errorDetail(await errorBodyText(body)));
        const retryAfter = response.headers["retry-after"];
        throw new ElevenLabsError(`ElevenLabs ${this.base.origin} answered ${response.statusCode}${detail ? `: ${detail}` : ""}`, {
          status: response.statusCode,
          retryable: isRetryableStatus(response.statusCode),
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
        });
      }
      const contentType = String(response.headers["content-type"] ?? "");
      if (!isAudioType(contentType)) {
        // A proxy's page or an error in JSON would otherwise be played to the caller as noise.
        const detail = this.redact(errorDetail(await errorBodyText(body)));
        throw new ElevenLabsError(`ElevenLabs ${this.base.origin} answered ${contentType} instead of PCM audio${detail ? `: ${detail}` : ""}`, {
          status: response.statusCode,
          retryable: false,
        });
      }
      const decoder = new Pcm16ChunkDecoder();
      for await (const bytes of body) {
        deadline.touch();
        const samples = decoder.push(bytes);
        if (samples.length > 0) yield { samples, sampleRate };
      }
      // A last odd byte would be half a sample: dropped.
    } catch (error) {
      if (!signal.aborted) throw this.asElevenLabsError(error, deadline.timedOut);
    } finally {
      deadline.close();
    }
  }

  private asElevenLabsError(error: unknown, timedOut: boolean): ElevenLabsError {
    if (error instanceof ElevenLabsError) return error;
    const where = this.base.origin;
    if (timedOut) {
      return new ElevenLabsError(`no audio from ElevenLabs ${where} within ${this.config.requestTimeoutMs} ms`, { status: null, retryable: true });
    }
    const reason = error instanceof Error ? error.message : String(error);
    return new ElevenLabsError(`ElevenLabs request to ${where} failed: ${this.redact(reason)}`, { status: null, retryable: true, cause: error });
  }

  private redact(text: string): string {
    return this.#apiKey ? text.replaceAll(this.#apiKey, "[api key]") : text;
  }
}

function baseUrl(base: string): URL {
  let url: URL;
  try {
    url = new URL(base.endsWith("/") ? base : `${base}/`);
  } catch {
    throw new Error(`ElevenLabsTts needs an http(s) URL, not ${JSON.stringify(base)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`ElevenLabsTts needs an http(s) URL, not ${url.protocol}`);
  return url;
}

/** PCM comes as audio/* or as bytes without a type; JSON, HTML or text is not audio. */
function isAudioType(contentType: string): boolean {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "" || type.startsWith("audio/") || type === "application/octet-stream";
}

/**
 * ElevenLabs' own words about a refused request: `{detail: {status, message}}`, a validation
 * error's `{detail: [{loc, msg}]}`, `{detail: "..."}`, or the text itself.
 */
function errorDetail(text: string): string {
  let message = text.trim();
  try {
    const detail: unknown = (JSON.parse(text) as { detail?: unknown } | null)?.detail;
    if (typeof detail === "string") message = detail;
    else if (Array.isArray(detail)) message = detail.map(validationMessage).filter(Boolean).join("; ") || message;
    else if (typeof detail === "object" && detail !== null) {
      const { status, message: said } = detail as Record<string, unknown>;
      if (typeof said === "string") message = typeof status === "string" ? `${said} (${status})` : said;
    }
  } catch {
    // Not JSON: the text itself.
  }
  return message.length > ERROR_MESSAGE_LIMIT ? `${message.slice(0, ERROR_MESSAGE_LIMIT)}...` : message;
}

function validationMessage(entry: unknown): string {
  if (typeof entry !== "object" || entry === null) return "";
  const { loc, msg } = entry as Record<string, unknown>;
  if (typeof msg !== "string") return "";
  return Array.isArray(loc) ? `${loc.join(".")}: ${msg}` : msg;
}
