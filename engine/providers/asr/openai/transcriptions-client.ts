import { RequestDeadline } from "../../request-deadline.js";
import { Blob } from "node:buffer";
import { FormData, request } from "undici";
import { isRetryableStatus } from "../../provider-error.js";
import { parseRetryAfter } from "../../provider-retry.js";
import { OpenAiTranscriptionError } from "./openai-transcription-error.js";

/** A transcription is a few hundred bytes; a larger answer is not one (and is not read into memory). */
const ANSWER_LIMIT = 64 * 1024;
const ERROR_MESSAGE_LIMIT = 300;

export interface TranscriptionRequest {
  /** A complete WAV file. */
  wav: Uint8Array;
  model: string;
  /** ISO 639-1 (`en`); omitted when empty (the server detects the language). */
  language: string;
}

/**
 * One `POST /v1/audio/transcriptions` as multipart/form-data (`file` audio.wav, `model`,
 * `language`, `response_format` json), answered `{"text": ...}`. Every failure is an
 * OpenAiTranscriptionError, except an abort, which rejects with the signal's reason.
 */
export class TranscriptionsClient {
  readonly #apiKey: string | undefined;

  constructor(
    private readonly endpoint: URL,
    apiKey: string | undefined,
    private readonly timeoutMs: number,
  ) {
    this.#apiKey = apiKey || undefined;
  }

  async transcribe(input: TranscriptionRequest, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    // Nothing from the server for `timeoutMs`: before the answer's headers, then between its chunks.
    const deadline = new RequestDeadline(signal, this.timeoutMs);
    let body: (AsyncIterable<Uint8Array> & { destroy(): void }) | undefined;
    try {
      const form = new FormData();
      form.append("file", new Blob([input.wav], { type: "audio/wav" }), "audio.wav");
      form.append("model", input.model);
      if (input.language) form.append("language", input.language);
      form.append("response_format", "json");
      const headers: Record<string, string> = { accept: "application/json" };
      if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
      const response = await request(this.endpoint, {
        method: "POST",
        headers,
        body: form,
        signal: deadline.signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      body = response.body;
      deadline.touch();
      const text = await readText(response.body, () => deadline.touch());
      if (response.statusCode < 200 || response.statusCode > 299) {
        const detail = this.redact(errorMessage(text ?? ""));
        const retryAfter = response.headers["retry-after"];
        throw new OpenAiTranscriptionError(`transcription server ${this.endpoint.origin} answered ${response.statusCode}${detail ? `: ${detail}` : ""}`, {
          status: response.statusCode,
          retryable: isRetryableStatus(response.statusCode),
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
        });
      }
      return this.transcript(text);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw this.asTranscriptionError(error, deadline.timedOut);
    } finally {
      deadline.close();
      // Left before its end (abort, timeout, an answer too large): the connection goes now.
      body?.destroy();
    }
  }

  /** The `text` of a JSON answer; anything else is a server that does not speak the protocol. */
  private transcript(text: string | undefined): string {
    const where = this.endpoint.origin;
    if (text === undefined) {
      throw new OpenAiTranscriptionError(`transcription server ${where} answered more than ${ANSWER_LIMIT} bytes: not a transcription`, { status: null, retryable: false });
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new OpenAiTranscriptionError(`transcription server ${where} answered something that is not JSON: ${this.redact(text.trim().slice(0, 100))}`, {
        status: null,
        retryable: false,
      });
    }
    const transcript = typeof answer === "object" && answer !== null ? (answer as { text?: unknown }).text : undefined;
    if (typeof transcript !== "string") {
      throw new OpenAiTranscriptionError(`transcription server ${where} answered JSON without a "text" string`, { status: null, retryable: false });
    }
    return transcript.trim();
  }

  private asTranscriptionError(error: unknown, timedOut: boolean): OpenAiTranscriptionError {
    if (error instanceof OpenAiTranscriptionError) return error;
    const where = this.endpoint.origin;
    if (timedOut) return new OpenAiTranscriptionError(`no answer from transcription server ${where} within ${this.timeoutMs} ms`, { status: null, retryable: true });
    const reason = error instanceof Error ? `${error.message}${"code" in error && typeof error.code === "string" ? ` (${error.code})` : ""}` : String(error);
    return new OpenAiTranscriptionError(`transcription request to ${where} failed: ${this.redact(reason)}`, { status: null, retryable: true, cause: error });
  }

  /** A server may echo the key it refused. */
  private redact(text: string): string {
    return this.#apiKey ? text.replaceAll(this.#apiKey, "[api key]") : text;
  }
}

/** The body as text, or undefined past ANSWER_LIMIT; `onChunk` runs as each chunk arrives. */
async function readText(body: AsyncIterable<Uint8Array>, onChunk: () => void): Promise<string | undefined> {
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for await (const bytes of body) {
    onChunk();
    size += bytes.byteLength;
    if (size > ANSWER_LIMIT) return undefined;
    text += decoder.decode(bytes, { stream: true });
  }
  return text + decoder.decode();
}

/** The server's own words about a failed request: OpenAI's `{error: {message}}`, FastAPI's `{detail}`, or plain text. */
function errorMessage(text: string): string {
  let message = text.trim();
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json === "object" && json !== null) {
      const { error, detail } = json as { error?: unknown; detail?: unknown };
      const found = typeof error === "string" ? error : typeof error === "object" && error !== null ? (error as { message?: unknown }).message : detail;
      if (typeof found === "string") message = found;
    }
  } catch {
    // Not JSON: the text itself.
  }
  return message.length > ERROR_MESSAGE_LIMIT ? `${message.slice(0, ERROR_MESSAGE_LIMIT)}...` : message;
}
