import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { pcm16ToBytes } from "../../engine/audio/pcm16.js";
import { voicedSpeech } from "./voiced-speech.js";

/** The one path the stand-in answers. */
export const SPEECH_PATH = "/v1/audio/speech";
/** Larger bodies are refused (OpenAI caps `input` at 4096 characters). */
const BODY_LIMIT = 64 * 1024;

export interface SpeechStandinOptions {
  /** Time from a request's arrival to its first audio byte: the cloud's time to first byte. */
  firstByteDelayMs: number;
  /** Audio per character of `input` (its UTF-16 length), divided by `speed` when sent. Default 65. */
  msPerCharacter?: number;
  /** Audio per written chunk. Default 100. */
  chunkMs?: number;
  /** How much faster than real time the chunks are written; Infinity writes them back to back. Default 4. */
  realtimeFactor?: number;
  /** When set, requests need `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Rate of the PCM answered. Default 24000 (OpenAI's `pcm`). */
  sampleRate?: number;
}

/** A speech request the stand-in accepted, in arrival order. */
export interface SpeechRequest {
  model: string;
  input: string;
  voice: string;
  response_format: "pcm";
  speed: number | undefined;
}

export interface SpeechStandin {
  /** Serves `POST /v1/audio/speech`; returns false (and leaves `res` alone) for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The requests accepted so far. */
  requests(): SpeechRequest[];
  /** The exact samples answered for `input` (and `speed`). */
  audioFor(input: string, speed?: number): Int16Array;
}

/**
 * A stand-in for an OpenAI-compatible speech server (`POST /v1/audio/speech`, `response_format:
 * "pcm"`), for tests and for the latency benchmark: a fixed time to first byte, then raw PCM16
 * little-endian mono in chunked transfer encoding, paced faster than real time like a GPU
 * server, so the benchmark measures the engine apart from a speech model's compute. The audio
 * is synthetic voiced sound (see voiced-speech.ts), the same bytes for the same input.
 */
export function speechStandin(options: SpeechStandinOptions): SpeechStandin {
  const config = resolve(options);
  const accepted: SpeechRequest[] = [];
  const audioFor = (input: string, speed?: number) => {
    const durationMs = (input.length * config.msPerCharacter) / (speed ?? 1);
    return voicedSpeech(input, Math.round((durationMs * config.sampleRate) / 1000), config.sampleRate);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return sendError(res, 405, `${req.method ?? "?"} is not allowed on ${SPEECH_PATH}: use POST`, null);
    }
    if (config.apiKey !== undefined && req.headers.authorization !== `Bearer ${config.apiKey}`) {
      return sendError(res, 401, "Incorrect API key provided.", null, "invalid_api_key");
    }
    const raw = await readBody(req);
    if (raw === undefined) return sendError(res, 413, `The request body is larger than ${BODY_LIMIT} bytes.`, null);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, "We could not parse the JSON body of your request.", null);
    }
    const request = validate(body);
    if ("field" in request) return sendError(res, 400, request.message, request.field);
    accepted.push(request);

    // Set before any wait: a client that goes away stops the writing at once.
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const bytes = pcm16ToBytes(audioFor(request.input, request.speed));
    const chunkBytes = 2 * Math.max(1, Math.round((config.chunkMs * config.sampleRate) / 1000));
    const intervalMs = config.chunkMs / config.realtimeFactor;
    try {
      await sleep(config.firstByteDelayMs, undefined, { signal: gone.signal });
      // No content-length: Node sends the body with chunked transfer encoding.
      res.writeHead(200, { "content-type": "audio/pcm" });
      const firstAt = performance.now();
      for (let at = 0, chunk = 0; at < bytes.length; at += chunkBytes, chunk++) {
        // Paced against the first chunk's time, so timer lateness does not add up.
        const wait = firstAt + chunk * intervalMs - performance.now();
        if (chunk > 0 && wait > 0) await sleep(wait, undefined, { signal: gone.signal });
        if (!res.write(bytes.subarray(at, at + chunkBytes))) await once(res, "drain", { signal: gone.signal });
      }
      res.end();
    } catch (error) {
      // The client went away: nothing left to answer.
      if (!gone.signal.aborted) throw error;
    }
  };

  return {
    handle(req, res) {
      if (new URL(req.url ?? "/", "http://standin").pathname !== SPEECH_PATH) return false;
      serve(req, res).catch(() => res.destroy());
      return true;
    },
    requests: () => [...accepted],
    audioFor,
  };
}

function resolve(options: SpeechStandinOptions): Required<Omit<SpeechStandinOptions, "apiKey">> & { apiKey: string | undefined } {
  const config = {
    firstByteDelayMs: options.firstByteDelayMs,
    msPerCharacter: options.msPerCharacter ?? 65,
    chunkMs: options.chunkMs ?? 100,
    realtimeFactor: options.realtimeFactor ?? 4,
    apiKey: options.apiKey,
    sampleRate: options.sampleRate ?? 24_000,
  };
  if (!(config.firstByteDelayMs >= 0 && Number.isFinite(config.firstByteDelayMs))) throw new Error(`firstByteDelayMs must be 0 or more, not ${config.firstByteDelayMs}`);
  if (!(config.msPerCharacter > 0 && Number.isFinite(config.msPerCharacter))) throw new Error(`msPerCharacter must be above 0, not ${config.msPerCharacter}`);
  if (!(config.chunkMs > 0 && Number.isFinite(config.chunkMs))) throw new Error(`chunkMs must be above 0, not ${config.chunkMs}`);
  if (!(config.realtimeFactor > 0)) throw new Error(`realtimeFactor must be above 0, not ${config.realtimeFactor}`);
  if (!Number.isInteger(config.sampleRate) || config.sampleRate < 8000 || config.sampleRate > 48_000) {
    throw new Error(`sampleRate must be a whole number of Hz from 8000 to 48000, not ${config.sampleRate}`);
  }
  return Object.freeze(config);
}

/** The request, or the first field that is wrong with it. */
function validate(body: unknown): SpeechRequest | { field: string; message: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { field: "body", message: "The request body must be a JSON object." };
  const fields = body as Record<string, unknown>;
  for (const field of ["model", "input", "voice"] as const) {
    const value = fields[field];
    if (value === undefined) return { field, message: `Missing required parameter: '${field}'.` };
    if (typeof value !== "string" || value.trim() === "") return { field, message: `Invalid '${field}': expected a non-empty string.` };
  }
  const input = fields.input as string;
  if (input.length > 4096) return { field: "input", message: "Invalid 'input': string too long, at most 4096 characters." };
  if (fields.response_format !== "pcm") {
    return { field: "response_format", message: `Invalid 'response_format': this stand-in answers only 'pcm', not ${JSON.stringify(fields.response_format ?? "mp3")}.` };
  }
  const speed = fields.speed;
  if (speed !== undefined && !(typeof speed === "number" && speed >= 0.25 && speed <= 4)) {
    return { field: "speed", message: "Invalid 'speed': expected a number from 0.25 to 4." };
  }
  return { model: fields.model as string, input, voice: fields.voice as string, response_format: "pcm", speed: speed as number | undefined };
}

/** The body as text, or undefined past the limit (read to the end all the same, so the answer can be sent). */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  }
  return size > BODY_LIMIT ? undefined : Buffer.concat(chunks).toString("utf8");
}

/** An OpenAI-style error body: `{error: {message, type, param, code}}`. */
function sendError(res: ServerResponse, status: number, message: string, param: string | null, code: string | null = null): void {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type, param, code } }));
}
