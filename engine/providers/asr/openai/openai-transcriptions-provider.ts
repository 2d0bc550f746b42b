import type { AudioFrame } from "../../../audio/audio-frame.js";
import { encodeWav } from "../../../audio/wav.js";
import { abortable } from "../../../stream/abortable.js";
import { DEFAULT_RETRY_POLICY, retryCall, type RetryPolicy } from "../../provider-retry.js";
import type { AsrProvider, AsrResult, AsrSession } from "../asr-provider.js";
import { OpenAiTranscriptionError } from "./openai-transcription-error.js";
import { TranscriptionsClient } from "./transcriptions-client.js";
import { transcriptionsEndpoint } from "./transcriptions-endpoint.js";
import { TRANSCRIPTION_SAMPLE_RATE, UtteranceAudio } from "./utterance-audio.js";

export interface OpenAiTranscriptionsConfig {
  /** Server base URL; requests go to `{url}/v1/audio/transcriptions`. Default `https://api.openai.com`. */
  url?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; local servers need none. Never logged nor put in errors. */
  apiKey?: string;
  /** Default `whisper-1`. */
  model?: string;
  /** Time allowed from sending an utterance to the answer's first byte (and between later bytes). Default 10000. */
  requestTimeoutMs?: number;
  /** An utterance longer than this sends only its last this many seconds. Default 30. */
  maxSeconds?: number;
  /** Retries of an utterance whose request fails retryably (429, 5xx, network, timeout). Default DEFAULT_RETRY_POLICY. */
  retry?: RetryPolicy;
}

/** The configuration in force, without the key. */
export type OpenAiTranscriptionsSettings = Readonly<Required<Omit<OpenAiTranscriptionsConfig, "apiKey" | "url">> & { endpoint: string }>;

/**
 * Speech recognition through an OpenAI-compatible `POST /v1/audio/transcriptions` (OpenAI,
 * whisper.cpp's server, faster-whisper servers such as speaches). Not a streaming recognizer:
 * each utterance's audio is collected until the turn logic says "finish now", then sent as one
 * 16 kHz mono WAV; the answer's text is the utterance's final (no partials). Stateless: a
 * session holds no connection, so utterances of a call may be recognized side by side.
 */
export class OpenAiTranscriptionsProvider implements AsrProvider {
  readonly name = "openai";
  readonly settings: OpenAiTranscriptionsSettings;
  private readonly client: TranscriptionsClient;

  constructor(config: OpenAiTranscriptionsConfig = {}) {
    const endpoint = transcriptionsEndpoint(config.url ?? "https://api.openai.com");
    const settings = {
      endpoint: endpoint.href,
      model: (config.model ?? "whisper-1").trim(),
      requestTimeoutMs: config.requestTimeoutMs ?? 10_000,
      maxSeconds: config.maxSeconds ?? 30,
      retry: config.retry ?? DEFAULT_RETRY_POLICY,
    };
    if (!settings.model) throw new Error("openai transcriptions: model must not be empty");
    if (!Number.isInteger(settings.requestTimeoutMs) || settings.requestTimeoutMs < 1) {
      throw new Error(`openai transcriptions: requestTimeoutMs must be a whole number of ms, at least 1, not ${settings.requestTimeoutMs}`);
    }
    if (!(settings.maxSeconds >= 1 && settings.maxSeconds <= 600)) {
      throw new Error(`openai transcriptions: maxSeconds must be from 1 to 600, not ${settings.maxSeconds}`);
    }
    this.settings = Object.freeze(settings);
    // The key lives in the client's #private field only: no dump of the provider shows it.
    this.client = new TranscriptionsClient(endpoint, config.apiKey, settings.requestTimeoutMs);
  }

  async open(options: { language: string; sampleRate: number; signal: AbortSignal }): Promise<AsrSession> {
    const { sampleRate } = options;
    if (!Number.isInteger(sampleRate) || sampleRate <= 0) {
      throw new OpenAiTranscriptionError(`openai transcriptions need a sample rate in Hz, not ${sampleRate}`, { status: null, retryable: false });
    }
    return new OpenAiTranscriptionsSession(this.client, this.settings, sampleRate, whisperLanguage(options.language));
  }
}

/** `en` from `en-US`: Whisper servers take ISO 639-1 codes and refuse regional tags. */
export function whisperLanguage(language: string): string {
  return (language.split(/[-_]/)[0] ?? "").trim().toLowerCase();
}

class OpenAiTranscriptionsSession implements AsrSession {
  private closed = false;

  constructor(
    private readonly client: TranscriptionsClient,
    private readonly settings: OpenAiTranscriptionsSettings,
    private readonly sampleRate: number,
    private readonly language: string,
  ) {}

  /**
   * Collects the utterance, then asks for its transcription (again, per the retry policy, when
   * it fails retryably) and yields it as the one final. An abort rejects with its reason at
   * once, whether the audio or the answer is being waited for; the request is cancelled.
   */
  async *transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal): AsyncIterable<AsrResult> {
    if (this.closed) throw new OpenAiTranscriptionError("the openai transcriptions session is closed", { status: null, retryable: false });
    const samples = await this.collect(audio, signal);
    if (samples.length === 0) {
      yield { type: "final", text: "" };
      return;
    }
    const request = { wav: encodeWav({ sampleRate: TRANSCRIPTION_SAMPLE_RATE, channels: 1, samples }), model: this.settings.model, language: this.language };
    const text = await retryCall(() => this.client.transcribe(request, signal), this.settings.retry, signal);
    yield { type: "final", text };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** The utterance at 16 kHz (its last maxSeconds), once its audio ends; empty when it had none. */
  private async collect(audio: AsyncIterable<AudioFrame>, signal: AbortSignal): Promise<Int16Array> {
    // Only the last maxSeconds are kept: a "turn" that long is a caller who never paused or a
    // noise that held the line open, and what the agent must answer is its end. It also bounds
    // the memory per call and stays inside the servers' limits (Whisper hears 30 s windows,
    // OpenAI takes at most 25 MB).
    const collected = new UtteranceAudio(this.sampleRate, this.settings.maxSeconds);
    const frames = audio[Symbol.asyncIterator]();
    let exhausted = false;
    try {
      for (;;) {
        const next = await abortable(frames.next(), signal);
        if (next.done) break;
        const frame = next.value;
        if (frame.sampleRate !== this.sampleRate) {
          throw new OpenAiTranscriptionError(`the openai transcriptions session was opened for ${this.sampleRate} Hz audio, not ${frame.sampleRate} Hz`, {
            status: null,
            retryable: false,
          });
        }
        collected.push(frame);
      }
      exhausted = true;
    } finally {
      // Tells the producer nobody reads any more (a pending read is dropped).
      if (!exhausted) void frames.return?.()?.catch(() => undefined);
    }
    return collected.inputSamples === 0 ? new Int16Array(0) : collected.finish();
  }
}
