import { RequestDeadline } from "../../request-deadline.js";
import { request } from "undici";
import type { AudioFrame } from "../../../audio/audio-frame.js";
import { DEFAULT_RETRY_POLICY, parseRetryAfter, type RetryPolicy } from "../../provider-retry.js";
import { errorBodyText } from "../error-body-text.js";
import { Pcm16ChunkDecoder } from "../pcm16-chunk-decoder.js";
import { speakSentences } from "../sentence-speech.js";
import type { SpeechChunk, TtsProvider } from "../tts-provider.js";
import type { VoiceInfo } from "../voice.js";
import { isRetryableStatus } from "../../provider-error.js";
import { OpenAiSpeechError } from "./openai-speech-error.js";
import { OPENAI_VOICE_NAMES, openAiVoices } from "./openai-voices.js";

const ERROR_MESSAGE_LIMIT = 300;

export interface OpenAiSpeechTtsConfig {
  /** Server base URL; requests go to `{url}/v1/audio/speech`. Default `https://api.openai.com`. */
  url?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; local servers need none. Never logged nor put in errors. */
  apiKey?: string;
  /** Default `tts-1`. */
  model?: string;
  /** The server's voice names to offer (ids get the `openai-` prefix). Default: OpenAI's built-in voices. */
  voices?: readonly string[];
  /** Time allowed from sending a request to its first audio byte (and between later bytes). Default 10000. */
  requestTimeoutMs?: number;
  /** Rate of the `pcm` answer: 24000 for OpenAI and Kokoro; some servers answer at their model's rate. */
  sampleRate?: number;
  /** Speaking rate, 0.25 to 4; sent only when set (the server's default is 1). */
  speed?: number;
  /** Retries of a sentence's request that fails retryably before its first audio. Default `DEFAULT_RETRY_POLICY` (250 ms, then 1 s). */
  retry?: RetryPolicy;
}

interface ResolvedConfig {
  url: string;
  model: string;
  voices: readonly string[];
  requestTimeoutMs: number;
  sampleRate: number;
  speed: number | undefined;
  retry: RetryPolicy;
}

/**
 * TTS through an OpenAI-compatible `POST /v1/audio/speech` (OpenAI, Kokoro-FastAPI, Piper
 * servers). Each input piece (the call session sends sentences) is one request for raw `pcm`
 * (PCM16 little-endian mono); its audio is yielded as the response body streams in. The next
 * sentence is requested while the current one streams, and read into memory so the server is
 * never held up; audio is yielded strictly in sentence order.
 */
export class OpenAiSpeechTts implements TtsProvider {
  readonly name = "openai";
  private readonly config: Readonly<ResolvedConfig>;
  // A #private field: not enumerable, so logging the provider never prints the key.
  readonly #apiKey: string | undefined;
  private readonly endpoint: URL;
  private readonly voiceList: readonly VoiceInfo[];

  constructor(config: OpenAiSpeechTtsConfig = {}) {
    const resolved: ResolvedConfig = {
      url: config.url ?? "https://api.openai.com",
      model: config.model ?? "tts-1",
      voices: [...(config.voices ?? OPENAI_VOICE_NAMES)],
      requestTimeoutMs: config.requestTimeoutMs ?? 10_000,
      sampleRate: config.sampleRate ?? 24_000,
      speed: config.speed,
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    };
    this.endpoint = speechEndpoint(resolved.url);
    if (!resolved.model.trim()) throw new Error("OpenAiSpeechTts needs a model name");
    if (resolved.voices.length === 0) throw new Error("OpenAiSpeechTts needs at least one voice");
    for (const voice of resolved.voices) {
      if (!/^\S+$/.test(voice)) throw new Error(`OpenAiSpeechTts voice names are non-empty and without spaces, not ${JSON.stringify(voice)}`);
    }
    if (new Set(resolved.voices).size !== resolved.voices.length) throw new Error("OpenAiSpeechTts voice names must be unique");
    if (!Number.isInteger(resolved.requestTimeoutMs) || resolved.requestTimeoutMs < 1) {
      throw new Error(`OpenAiSpeechTts needs a requestTimeoutMs of at least 1 ms, not ${resolved.requestTimeoutMs}`);
    }
    if (!Number.isInteger(resolved.sampleRate) || resolved.sampleRate < 8000 || resolved.sampleRate > 48_000) {
      throw new Error(`OpenAiSpeechTts needs a sampleRate from 8000 to 48000 Hz, not ${resolved.sampleRate}`);
    }
    if (resolved.speed !== undefined && !(resolved.speed >= 0.25 && resolved.speed <= 4)) {
      throw new Error(`OpenAiSpeechTts needs a speed from 0.25 to 4, not ${resolved.speed}`);
    }
    this.config = Object.freeze({ ...resolved, voices: Object.freeze(resolved.voices) });
    this.#apiKey = config.apiKey || undefined;
    this.voiceList = openAiVoices(this.config.voices, this.config.sampleRate);
  }

  voices(): readonly VoiceInfo[] {
    return this.voiceList;
  }

  async *synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const { voiceId, signal } = options;
    const voice = this.voiceList.find((v) => v.id === voiceId);
    if (!voice) throw new Error(`unknown OpenAI speech voice "${voiceId}"; configured voices: ${this.voiceList.map((v) => v.id).join(", ")}`);
    yield* speakSentences(text, { signal, retry: this.config.retry, speak: (input, signal) => this.request(input, voice.name, signal) });
  }

  /** One request for one sentence: its audio as the body streams in; ends quietly on abort. */
  private async *request(input: string, voice: string, signal: AbortSignal): AsyncGenerator<AudioFrame> {
    const { model, speed, requestTimeoutMs, sampleRate } = this.config;
    const deadline = new RequestDeadline(signal, requestTimeoutMs);
    try {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
      const body = JSON.stringify({ model, input, voice, response_format: "pcm", ...(speed === undefined ? {} : { speed }) });
      const response = await request(this.endpoint, {
        method: "POST",
        headers,
        body,
        signal: deadline.signal,
        headersTimeout: requestTimeoutMs,
        bodyTimeout: requestTimeoutMs,
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        const detail = this.redact(await errorDetail(response.body as AsyncIterable<Uint8Array>));
        const retryAfter = response.headers["retry-after"];
        throw new OpenAiSpeechError(`speech server ${this.endpoint.origin} answered ${response.statusCode}${detail ? `: ${detail}` : ""}`, {
          status: response.statusCode,
          retryable: isRetryableStatus(response.statusCode),
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
        });
      }
      const decoder = new Pcm16ChunkDecoder();
      for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
        // Later bytes are bounded by undici's bodyTimeout.
        deadline.stopClock();
        const samples = decoder.push(bytes);
        if (samples.length > 0) yield { samples, sampleRate };
      }
      // A last odd byte would be half a sample: dropped.
    } catch (error) {
      if (!signal.aborted) throw this.asSpeechError(error, deadline.timedOut);
    } finally {
      deadline.close();
    }
  }

  private asSpeechError(error: unknown, timedOut: boolean): OpenAiSpeechError {
    if (error instanceof OpenAiSpeechError) return error;
    const where = this.endpoint.origin;
    if (timedOut) {
      return new OpenAiSpeechError(`no audio from speech server ${where} within ${this.config.requestTimeoutMs} ms`, { status: null, retryable: true });
    }
    const reason = error instanceof Error ? error.message : String(error);
    return new OpenAiSpeechError(`speech request to ${where} failed: ${this.redact(reason)}`, { status: null, retryable: true, cause: error });
  }

  private redact(text: string): string {
    return this.#apiKey ? text.replaceAll(this.#apiKey, "[api key]") : text;
  }
}

/** `{url}/v1/audio/speech`, keeping any path prefix of the base (a reverse proxy's). */
function speechEndpoint(base: string): URL {
  let url: URL;
  try {
    url = new URL(base.endsWith("/") ? base : `${base}/`);
  } catch {
    throw new Error(`OpenAiSpeechTts needs an http(s) URL, not ${JSON.stringify(base)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`OpenAiSpeechTts needs an http(s) URL, not ${url.protocol}`);
  return new URL("v1/audio/speech", url);
}

/** The server's own words about a failed request: OpenAI's `{error: {message}}`, FastAPI's `{detail}`, or plain text. */
async function errorDetail(body: AsyncIterable<Uint8Array>): Promise<string> {
  const text = await errorBodyText(body);
  let message = text.trim();
  try {
    message = messageOf(JSON.parse(text)) ?? message;
  } catch {
    // Not JSON: the text itself.
  }
  return message.length > ERROR_MESSAGE_LIMIT ? `${message.slice(0, ERROR_MESSAGE_LIMIT)}...` : message;
}

function messageOf(json: unknown): string | undefined {
  if (typeof json === "string") return json;
  if (Array.isArray(json)) return messageOf(json[0]);
  if (typeof json !== "object" || json === null) return undefined;
  const record = json as Record<string, unknown>;
  for (const key of ["message", "error", "detail", "msg"]) {
    const found = record[key] === undefined ? undefined : messageOf(record[key]);
    if (found) return found;
  }
  return undefined;
}
