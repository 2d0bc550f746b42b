import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { pcm16ToBytes } from "../../engine/audio/pcm16.js";
import { voicedSpeech } from "./voiced-speech.js";

/** `POST /v1/text-to-speech/{voice_id}/stream`: the one path the stand-in answers. */
const STREAM_PATH = /^\/v1\/text-to-speech\/([^/]+)\/stream$/;
/** The PCM rates ElevenLabs offers as `output_format=pcm_<rate>`. */
const PCM_RATES = new Set([8000, 16_000, 22_050, 24_000, 44_100, 48_000]);
const BODY_LIMIT = 64 * 1024;

export interface ElevenLabsStandinOptions {
  /** When set, requests need `xi-api-key: <apiKey>`. */
  apiKey?: string;
  /** Voice ids it knows; others answer 404 voice_not_found. Default: any id of letters and digits. */
  voiceIds?: readonly string[];
  /** Time from a request's arrival to its first audio byte. Default 0. */
  firstByteDelayMs?: number;
  /** Between written chunks. Default 5. */
  chunkDelayMs?: number;
  /** Bytes per written chunk; an odd number cuts samples in half at every boundary. Default 100 ms of audio. */
  chunkBytes?: number;
  /** Audio per character of `text`. Default 65. */
  msPerCharacter?: number;
}

/** A request the stand-in accepted, in arrival order. */
export interface ElevenLabsRequest {
  voiceId: string;
  outputFormat: string;
  text: string;
  modelId: string | undefined;
}

/** What the next request gets instead of its audio (taken once, in order). */
export type ElevenLabsFailure =
  /** An error answer; `body` defaults to ElevenLabs' `{detail: {status, message}}`. */
  | { status: number; body?: string; contentType?: string; retryAfter?: string }
  /** 200 and audio headers, then silence (the connection stays open). */
  | { stall: "before-audio" }
  /** 200 and the first chunk of audio, then silence. */
  | { stall: "after-first-chunk" };

export interface ElevenLabsStandin {
  /** Serves the stream path; returns false (and leaves `res` alone) for any other. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The next request is answered so instead; several calls queue up. */
  failNext(failure: ElevenLabsFailure): void;
  /** The requests accepted so far (failures queued by failNext included). */
  requests(): ElevenLabsRequest[];
  /** Answers closed by the client before they were complete: aborted or abandoned requests. */
  cutOff(): number;
  /** The exact samples answered for `text` at `sampleRate`. */
  audioFor(text: string, sampleRate: number): Int16Array;
}

/**
 * A stand-in for ElevenLabs' streaming speech endpoint, for tests: it checks what a real
 * request carries (the `xi-api-key` header, a known voice id in the path, `output_format`
 * `pcm_<rate>`, a JSON body with `text` and `model_id`), answers refusals in ElevenLabs' shapes
 * (`{detail: {status, message}}`, 422 `{detail: [{loc, msg, type}]}`), and streams synthetic
 * voiced PCM16 little-endian (see voiced-speech.ts) in several chunks with a delay between them.
 */
export function elevenLabsStandin(options: ElevenLabsStandinOptions = {}): ElevenLabsStandin {
  const accepted: ElevenLabsRequest[] = [];
  const failures: ElevenLabsFailure[] = [];
  const msPerCharacter = options.msPerCharacter ?? 65;
  let cutOff = 0;
  const audioFor = (text: string, sampleRate: number) => voicedSpeech(text, Math.round((text.length * msPerCharacter * sampleRate) / 1000), sampleRate);

  const serve = async (req: IncomingMessage, res: ServerResponse, voiceId: string, query: URLSearchParams): Promise<void> => {
    if (req.method !== "POST") {
      req.resume();
      res.setHeader("allow", "POST");
      return sendDetail(res, 405, "method_not_allowed", `${req.method ?? "?"} is not allowed: use POST`);
    }
    const raw = await readBody(req);
    if (options.apiKey !== undefined && req.headers["xi-api-key"] !== options.apiKey) {
      return sendDetail(res, 401, "invalid_api_key", "Invalid API key");
    }
    if (!/^[A-Za-z0-9]+$/.test(voiceId) || (options.voiceIds && !options.voiceIds.includes(voiceId))) {
      return sendDetail(res, 404, "voice_not_found", `A voice with the voice_id ${voiceId} was not found.`);
    }
    const format = query.get("output_format") ?? "mp3_44100_128";
    const rate = /^pcm_(\d+)$/.exec(format)?.[1];
    if (rate === undefined || !PCM_RATES.has(Number(rate))) {
      return sendDetail(res, 400, "invalid_output_format", `This stand-in answers only pcm_<rate>, not ${JSON.stringify(format)}.`);
    }
    if (raw === undefined) return sendDetail(res, 413, "payload_too_large", `The request body is larger than ${BODY_LIMIT} bytes.`);
    const body = parseJson(raw);
    if (body === undefined) return sendValidation(res, ["body"], "JSON decode error", "json_invalid");
    const { text, model_id } = body;
    if (typeof text !== "string") return sendValidation(res, ["body", "text"], "Field required", "missing");
    if (!text.trim()) return sendDetail(res, 400, "empty_text", "Text must not be empty.");
    if (model_id !== undefined && typeof model_id !== "string") return sendValidation(res, ["body", "model_id"], "Input should be a valid string", "string_type");
    accepted.push({ voiceId, outputFormat: format, text, modelId: model_id });

    // Set before any wait: a client that goes away stops the writing at once.
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) cutOff++;
      gone.abort();
    });
    const failure = failures.shift();
    if (failure && "status" in failure) {
      if (failure.retryAfter !== undefined) res.setHeader("retry-after", failure.retryAfter);
      if (failure.body === undefined) return sendDetail(res, failure.status, "standin_failure", `The stand-in was told to answer ${failure.status}.`);
      res.writeHead(failure.status, { "content-type": failure.contentType ?? "application/json" });
      res.end(failure.body);
      return;
    }
    const sampleRate = Number(rate);
    const bytes = pcm16ToBytes(audioFor(text, sampleRate));
    const chunkBytes = options.chunkBytes ?? 2 * Math.round(sampleRate / 10);
    try {
      await sleep(options.firstByteDelayMs ?? 0, undefined, { signal: gone.signal });
      // No content-length: Node sends the body with chunked transfer encoding, as ElevenLabs does.
      res.writeHead(200, { "content-type": "audio/pcm" });
      if (failure?.stall === "before-audio") {
        res.flushHeaders();
        return;
      }
      for (let at = 0; at < bytes.length; at += chunkBytes) {
        if (at > 0) await sleep(options.chunkDelayMs ?? 5, undefined, { signal: gone.signal });
        if (!res.write(bytes.subarray(at, at + chunkBytes))) await once(res, "drain", { signal: gone.signal });
        if (failure?.stall === "after-first-chunk") return;
      }
      res.end();
    } catch (error) {
      // The client went away: nothing left to answer.
      if (!gone.signal.aborted) throw error;
    }
  };

  return {
    handle(req, res) {
      const url = new URL(req.url ?? "/", "http://standin");
      const voiceId = STREAM_PATH.exec(url.pathname)?.[1];
      if (voiceId === undefined) return false;
      serve(req, res, decodeURIComponent(voiceId), url.searchParams).catch(() => res.destroy());
      return true;
    },
    failNext: (failure) => void failures.push(failure),
    requests: () => [...accepted],
    cutOff: () => cutOff,
    audioFor,
  };
}

function parseJson(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
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

/** ElevenLabs' error shape: `{detail: {status, message}}`. */
function sendDetail(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ detail: { status: code, message } }));
}

/** A request validation error (422), FastAPI's shape as ElevenLabs answers it. */
function sendValidation(res: ServerResponse, loc: string[], msg: string, type: string): void {
  res.writeHead(422, { "content-type": "application/json" });
  res.end(JSON.stringify({ detail: [{ type, loc, msg }] }));
}
