import type { IncomingMessage, ServerResponse } from "node:http";
import { Response } from "undici";
import { parseWav, WavFormatError } from "../../engine/audio/wav.js";

/** The one path the stand-in answers. */
export const TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions";
/** OpenAI refuses files over 25 MB. */
const BODY_LIMIT = 25 * 1024 * 1024;
/** What Whisper servers take: the provider must send exactly this. */
const WAV_RATE = 16_000;

/** A failure the stand-in answers a request with instead of its transcription. */
export type TranscriptionFailure =
  /** That status with an OpenAI-style error body (and `Retry-After` when given). */
  | { type: "status"; status: number; message?: string; retryAfter?: string }
  /** 200 and its headers, then nothing: a stalled answer. */
  | { type: "stall" }
  /** Never answers at all, not even headers (the upload waits). */
  | { type: "hang" }
  /** 200 with this body, which is not a transcription. */
  | { type: "malformed"; body: string };

export interface TranscriptionsStandinOptions {
  /** When set, requests need `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** The text answered for each accepted request. Default: a canned sentence. */
  text?: string | ((request: TranscriptionRequest) => string);
  /** Time from a request's arrival to its answer (model compute). Default 0. */
  answerDelayMs?: number;
}

/** A transcription request the stand-in accepted (parsed from its multipart body), in arrival order. */
export interface TranscriptionRequest {
  model: string;
  language: string | undefined;
  response_format: string | undefined;
  authorization: string | undefined;
  file: { name: string; type: string; sampleRate: number; channels: number; samples: Int16Array };
}

export interface TranscriptionsStandin {
  /** Serves `POST /v1/audio/transcriptions`; returns false (and leaves `res` alone) for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The next requests (one each, in order) fail this way; their bodies are read and checked first. */
  failNext(...failures: TranscriptionFailure[]): void;
  /** The requests accepted so far (failed ones included). */
  requests(): TranscriptionRequest[];
  /** Requests that reached the stand-in, refused ones included. */
  received(): number;
  /** Answers whose connection the client closed before they were complete. */
  cutOff(): number;
}

export const CANNED_TRANSCRIPT = "I'd like to book a cleaning for next Tuesday.";

/**
 * A stand-in for an OpenAI-compatible transcription server (`POST /v1/audio/transcriptions`,
 * multipart/form-data with `file`, `model`, `language`, `response_format`), for tests: it
 * parses the multipart body with a real parser (undici's), checks the WAV is 16 kHz mono
 * PCM16, and answers `{"text": ...}` or a failure queued with `failNext`.
 */
export function transcriptionsStandin(options: TranscriptionsStandinOptions = {}): TranscriptionsStandin {
  const accepted: TranscriptionRequest[] = [];
  const failures: TranscriptionFailure[] = [];
  let received = 0;
  let cutOff = 0;

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    received++;
    res.on("close", () => {
      if (!res.writableFinished) cutOff++;
    });
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return sendError(res, 405, `${req.method ?? "?"} is not allowed on ${TRANSCRIPTIONS_PATH}: use POST`, null);
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      req.resume();
      return sendError(res, 401, "Incorrect API key provided.", null, "invalid_api_key");
    }
    const contentType = req.headers["content-type"] ?? "";
    if (!contentType.startsWith("multipart/form-data")) {
      req.resume();
      return sendError(res, 400, `Expected multipart/form-data, not ${JSON.stringify(contentType)}.`, null);
    }
    const raw = await readBody(req);
    if (raw === undefined) return sendError(res, 413, `Maximum content size limit (${BODY_LIMIT}) exceeded.`, "file");
    const parsed = await parseRequest(raw, contentType, req.headers.authorization);
    if ("field" in parsed) return sendError(res, 400, parsed.message, parsed.field);
    accepted.push(parsed);

    const failure = failures.shift();
    if (failure?.type === "status") {
      const headers: Record<string, string> = failure.retryAfter === undefined ? {} : { "retry-after": failure.retryAfter };
      return sendError(res, failure.status, failure.message ?? "The server had an error while processing your request.", null, null, headers);
    }
    if (failure?.type === "hang") return;
    if (failure?.type === "stall") {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
      return;
    }
    if (options.answerDelayMs) await new Promise((resolve) => setTimeout(resolve, options.answerDelayMs));
    if (failure?.type === "malformed") {
      res.writeHead(200, { "content-type": "application/json" }).end(failure.body);
      return;
    }
    const text = typeof options.text === "function" ? options.text(parsed) : (options.text ?? CANNED_TRANSCRIPT);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text }));
  };

  return {
    handle(req, res) {
      if (new URL(req.url ?? "/", "http://standin").pathname !== TRANSCRIPTIONS_PATH) return false;
      serve(req, res).catch(() => res.destroy());
      return true;
    },
    failNext: (...next) => void failures.push(...next),
    requests: () => [...accepted],
    received: () => received,
    cutOff: () => cutOff,
  };
}

/** The request's fields, or the first one that is wrong. */
async function parseRequest(raw: Buffer, contentType: string, authorization: string | undefined): Promise<TranscriptionRequest | { field: string; message: string }> {
  let form: Awaited<ReturnType<Response["formData"]>>;
  try {
    form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
  } catch {
    return { field: "body", message: "Could not parse multipart form." };
  }
  const file = form.get("file");
  if (file === null || typeof file === "string") return { field: "file", message: "Missing required parameter: 'file'." };
  const model = form.get("model");
  if (typeof model !== "string" || model.trim() === "") return { field: "model", message: "Missing required parameter: 'model'." };
  const language = form.get("language");
  if (language !== null && (typeof language !== "string" || !/^[a-z]{2,3}$/.test(language))) {
    return { field: "language", message: `Invalid language ${JSON.stringify(language)}: expected an ISO-639-1 code such as 'en'.` };
  }
  const format = form.get("response_format");
  if (format !== null && format !== "json") return { field: "response_format", message: `This stand-in answers only 'json', not ${JSON.stringify(format)}.` };
  let wav: ReturnType<typeof parseWav>;
  try {
    wav = parseWav(new Uint8Array(await file.arrayBuffer()));
  } catch (error) {
    if (!(error instanceof WavFormatError)) throw error;
    return { field: "file", message: `Invalid file format: ${error.message}.` };
  }
  if (wav.sampleRate !== WAV_RATE || wav.channels !== 1) {
    return { field: "file", message: `This stand-in takes ${WAV_RATE} Hz mono WAV, not ${wav.sampleRate} Hz with ${wav.channels} channels.` };
  }
  return {
    model,
    language: language ?? undefined,
    response_format: format ?? undefined,
    authorization,
    file: { name: file.name, type: file.type, sampleRate: wav.sampleRate, channels: wav.channels, samples: wav.samples },
  };
}

/** The body, or undefined past the limit (read to the end all the same, so the answer can be sent). */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  }
  return size > BODY_LIMIT ? undefined : Buffer.concat(chunks);
}

/** An OpenAI-style error body: `{error: {message, type, param, code}}`. */
function sendError(res: ServerResponse, status: number, message: string, param: string | null, code: string | null = null, headers: Record<string, string> = {}): void {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error: { message, type, param, code } }));
}
