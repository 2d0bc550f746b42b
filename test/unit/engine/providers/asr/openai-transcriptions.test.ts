import http from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { samplesPerFrame, type AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { pcm16ToBytes } from "../../../../../engine/audio/pcm16.js";
import { Resampler } from "../../../../../engine/audio/resampler.js";
import { encodeWav } from "../../../../../engine/audio/wav.js";
import type { AsrResult, AsrSession } from "../../../../../engine/providers/asr/asr-provider.js";
import { openAiTranscriptionsDefinition } from "../../../../../engine/providers/asr/openai/index.js";
import { OpenAiTranscriptionError } from "../../../../../engine/providers/asr/openai/openai-transcription-error.js";
import {
  OpenAiTranscriptionsProvider,
  whisperLanguage,
  type OpenAiTranscriptionsConfig,
} from "../../../../../engine/providers/asr/openai/openai-transcriptions-provider.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";
import { AsyncQueue } from "../../../../../engine/stream/async-queue.js";
import {
  CANNED_TRANSCRIPT,
  transcriptionsStandin,
  type TranscriptionsStandin,
  type TranscriptionsStandinOptions,
} from "../../../../../scripts/standins/openai-transcriptions-standin.js";
import { closedLoopbackPort } from "../../../../helpers/loopback-peers.js";

const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function listen(handler: Handler): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The stand-in on a loopback server; anything but its path is 404. */
async function startStandin(options: TranscriptionsStandinOptions = {}): Promise<{ url: string; standin: TranscriptionsStandin }> {
  const standin = transcriptionsStandin(options);
  const url = await listen((req, res) => {
    if (!standin.handle(req, res)) res.writeHead(404).end();
  });
  return { url, standin };
}

/** Retries as in production, without the waits. */
const NO_WAIT = { delaysMs: [0, 0], maxRetryAfterMs: 2000 };
const KEY = "sk-test-secret-7788";
const never = new AbortController().signal;

async function openSession(config: OpenAiTranscriptionsConfig, sampleRate = 8000, language = "en-US"): Promise<AsrSession> {
  return new OpenAiTranscriptionsProvider({ retry: NO_WAIT, ...config }).open({ language, sampleRate, signal: never });
}

/** A 440 Hz tone with a slow sweep: distinct samples all along. */
function tone(seconds: number, sampleRate: number): Int16Array {
  return Int16Array.from({ length: Math.round(seconds * sampleRate) }, (_, n) => Math.round(8000 * Math.sin((2 * Math.PI * (440 + n / 400) * n) / sampleRate)));
}

async function* framesOf(samples: Int16Array, sampleRate: number): AsyncGenerator<AudioFrame> {
  const size = samplesPerFrame(sampleRate);
  for (let at = 0; at < samples.length; at += size) {
    await new Promise((resolve) => setImmediate(resolve));
    yield { samples: samples.slice(at, at + size), sampleRate };
  }
}

async function results(session: AsrSession, audio: AsyncIterable<AudioFrame>, signal = never): Promise<AsrResult[]> {
  const out: AsrResult[] = [];
  for await (const result of session.transcribe(audio, signal)) out.push(result);
  return out;
}

function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable("transcription should have failed"),
    (error: unknown) => error,
  );
}

/** The whole signal at 16 kHz, as the engine's resampler gives it in one go. */
function at16k(samples: Int16Array): Int16Array {
  const resampler = new Resampler({ inputRate: 8000, outputRate: 16_000 });
  const head = resampler.push(samples);
  const tail = resampler.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

function sameSamples(actual: Int16Array, expected: Int16Array): boolean {
  return actual.length === expected.length && pcm16ToBytes(actual).equals(pcm16ToBytes(expected));
}

describe("OpenAiTranscriptionsProvider", () => {
  it("sends an 8 kHz utterance as one 16 kHz mono WAV in a multipart request and yields the text as the one final", async () => {
    const { url, standin } = await startStandin({ apiKey: KEY, text: "  Book me in for Tuesday.  " });
    const session = await openSession({ url, apiKey: KEY, model: "whisper-large-v3" }, 8000, "en-US");
    const input = tone(1.5, 8000);

    expect(await results(session, framesOf(input, 8000))).toEqual([{ type: "final", text: "Book me in for Tuesday." }]);

    const [request, ...more] = standin.requests();
    expect(more).toEqual([]);
    expect(request).toMatchObject({
      model: "whisper-large-v3",
      language: "en",
      response_format: "json",
      authorization: `Bearer ${KEY}`,
      file: { name: "audio.wav", type: "audio/wav", sampleRate: 16_000, channels: 1 },
    });
    // Twice the samples, and exactly what the engine's resampler makes of the whole utterance.
    expect(request!.file.samples.length).toBe(2 * input.length);
    expect(sameSamples(request!.file.samples, at16k(input))).toBe(true);
  });

  it("sends 16 kHz audio as it is, without a key when none is set, and omits an unknown language", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url }, 16_000, "");
    const input = tone(0.5, 16_000);

    expect(await results(session, framesOf(input, 16_000))).toEqual([{ type: "final", text: CANNED_TRANSCRIPT }]);
    const [request] = standin.requests();
    expect(request).toMatchObject({ model: "whisper-1", language: undefined, authorization: undefined });
    expect(sameSamples(request!.file.samples, input)).toBe(true);
  });

  it("answers an utterance without audio with an empty final and sends nothing", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url });

    expect(await results(session, framesOf(new Int16Array(0), 8000))).toEqual([{ type: "final", text: "" }]);
    const empty = new AsyncQueue<AudioFrame>();
    empty.push({ samples: new Int16Array(0), sampleRate: 8000 });
    empty.end();
    expect(await results(session, empty)).toEqual([{ type: "final", text: "" }]);
    expect(standin.received()).toBe(0);
  });

  it("keeps only the last maxSeconds of a long utterance", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url, maxSeconds: 1 });
    const input = tone(3.2, 8000);

    await results(session, framesOf(input, 8000));

    const sent = standin.requests()[0]!.file.samples;
    const whole = at16k(input);
    expect(sent.length).toBe(16_000);
    expect(sameSamples(sent, whole.subarray(whole.length - 16_000))).toBe(true);
  });

  it("tries again after a 429 with Retry-After and then recognizes", async () => {
    const { url, standin } = await startStandin();
    standin.failNext({ type: "status", status: 429, message: "Rate limit reached.", retryAfter: "1" });
    const session = await openSession({ url });

    expect(await results(session, framesOf(tone(0.3, 8000), 8000))).toEqual([{ type: "final", text: CANNED_TRANSCRIPT }]);
    expect(standin.requests()).toHaveLength(2);
  });

  it("fails with a Retry-After longer than a caller can wait, without trying again", async () => {
    const { url, standin } = await startStandin();
    standin.failNext({ type: "status", status: 429, retryAfter: "30" });
    const session = await openSession({ url });

    const error = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(error).toBeInstanceOf(OpenAiTranscriptionError);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 30_000, stage: "asr", provider: "openai" });
    expect(standin.requests()).toHaveLength(1);
  });

  it.each([500, 503])("tries again after a %i and then recognizes", async (status) => {
    const { url, standin } = await startStandin();
    standin.failNext({ type: "status", status, message: "overloaded" });
    const session = await openSession({ url });

    expect(await results(session, framesOf(tone(0.3, 8000), 8000))).toEqual([{ type: "final", text: CANNED_TRANSCRIPT }]);
    expect(standin.requests()).toHaveLength(2);
  });

  it("fails retryably with the last 5xx when every try fails", async () => {
    const { url, standin } = await startStandin();
    standin.failNext(...[1, 2, 3, 4].map(() => ({ type: "status" as const, status: 502 })));
    const session = await openSession({ url });

    const error = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(error).toMatchObject({ status: 502, retryable: true });
    expect(standin.requests()).toHaveLength(3);
  });

  it.each([400, 401])("does not try again after a %i: a ProviderError that is not retryable, without the key", async (status) => {
    let requests = 0;
    // A careless server that echoes the credentials it got.
    const url = await listen((req, res) => {
      requests++;
      req.resume();
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `refused ${req.headers.authorization}`, type: "invalid_request_error" } }));
    });
    const session = await openSession({ url, apiKey: KEY });

    const error = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(OpenAiTranscriptionError);
    expect(error).toMatchObject({ status, retryable: false, stage: "asr", provider: "openai" });
    expect((error as Error).message).toContain("refused Bearer [api key]");
    expect((error as Error).message).not.toContain(KEY);
    expect(requests).toBe(1);
  });

  it("refuses a wrong key with the stand-in's 401", async () => {
    const { url, standin } = await startStandin({ apiKey: "sk-right" });
    const session = await openSession({ url, apiKey: KEY });

    const error = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect((error as Error).message).toContain("Incorrect API key provided.");
    expect(standin.received()).toBe(1);
  });

  it("fails retryably, without a status, when the answer stalls after its headers or never starts", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url, requestTimeoutMs: 300 });

    standin.failNext({ type: "stall" }, { type: "stall" }, { type: "stall" });
    const stalled = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(stalled).toBeInstanceOf(OpenAiTranscriptionError);
    expect(stalled).toMatchObject({ status: null, retryable: true });
    expect((stalled as Error).message).toContain("within 300 ms");

    standin.failNext({ type: "hang" }, { type: "hang" }, { type: "hang" });
    const silent = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(silent).toMatchObject({ status: null, retryable: true });
    expect(standin.requests()).toHaveLength(6);
  });

  it("recognizes on the next try after a stalled answer", async () => {
    const { url, standin } = await startStandin();
    standin.failNext({ type: "stall" });
    const session = await openSession({ url, requestTimeoutMs: 300 });

    expect(await results(session, framesOf(tone(0.3, 8000), 8000))).toEqual([{ type: "final", text: CANNED_TRANSCRIPT }]);
    expect(standin.requests()).toHaveLength(2);
  });

  it.each([["{not json"], ['{"transcript": "hi"}'], ["null"], ['{"text": 42}'], ["<html>Bad gateway</html>"]])(
    "fails with a ProviderError, not a TypeError, on the answer %s",
    async (body) => {
      const { url, standin } = await startStandin();
      standin.failNext({ type: "malformed", body });
      const session = await openSession({ url });

      const error = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
      expect(error).toBeInstanceOf(OpenAiTranscriptionError);
      expect(error).toMatchObject({ status: null, retryable: false });
      expect(standin.requests()).toHaveLength(1);
    },
  );

  it("fails retryably when nobody listens, without the key in the message", async () => {
    const session = await openSession({ url: `http://127.0.0.1:${await closedLoopbackPort()}`, apiKey: KEY });

    const error = await failure(results(session, framesOf(tone(0.3, 8000), 8000)));
    expect(error).toBeInstanceOf(OpenAiTranscriptionError);
    expect(error).toMatchObject({ status: null, retryable: true });
    expect((error as Error).message).not.toContain(KEY);
  });

  it("stops at once when aborted while the upload waits for its answer, and closes the connection", async () => {
    const { url, standin } = await startStandin();
    standin.failNext({ type: "hang" });
    // A minute's timeout: far past the test's own if the abort were not honoured.
    const session = await openSession({ url, requestTimeoutMs: 60_000 });
    const abort = new AbortController();

    const outcome = failure(results(session, framesOf(tone(0.3, 8000), 8000), abort.signal));
    await vi.waitFor(() => expect(standin.requests()).toHaveLength(1));
    abort.abort(new Error("call ended"));

    expect(await outcome).toMatchObject({ message: "call ended" });
    await vi.waitFor(() => expect(standin.cutOff()).toBe(1));
    expect(standin.requests()).toHaveLength(1);
  });

  it("stops at once when aborted while waiting for the audio, and sends nothing", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url });
    const audio = new AsyncQueue<AudioFrame>();
    audio.push({ samples: tone(0.02, 8000), sampleRate: 8000 });
    const abort = new AbortController();

    const outcome = failure(results(session, audio, abort.signal));
    await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort(new Error("call ended"));

    expect(await outcome).toMatchObject({ message: "call ended" });
    expect(standin.received()).toBe(0);
  });

  it("refuses frames at another rate than the session was opened with", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url }, 8000);

    const error = await failure(results(session, framesOf(tone(0.1, 16_000), 16_000)));
    expect(error).toBeInstanceOf(OpenAiTranscriptionError);
    expect(error).toMatchObject({ retryable: false });
    expect(standin.received()).toBe(0);
  });

  it("keeps the key out of the provider's dumps", () => {
    const provider = new OpenAiTranscriptionsProvider({ apiKey: KEY });
    expect(JSON.stringify(provider)).not.toContain(KEY);
    expect(inspect(provider, { depth: 10 })).not.toContain(KEY);
  });

  it("takes a base URL with a path prefix or ending in /v1", () => {
    expect(new OpenAiTranscriptionsProvider({ url: "http://127.0.0.1:8080/" }).settings.endpoint).toBe("http://127.0.0.1:8080/v1/audio/transcriptions");
    expect(new OpenAiTranscriptionsProvider({ url: "http://127.0.0.1:8000/whisper/v1" }).settings.endpoint).toBe("http://127.0.0.1:8000/whisper/v1/audio/transcriptions");
  });

  it.each([
    [{ url: "ftp://example.com" }, "http or https"],
    [{ url: "https://user:pw@example.com" }, "apiKey"],
    [{ model: " " }, "model"],
    [{ requestTimeoutMs: 0 }, "requestTimeoutMs"],
    [{ maxSeconds: 0 }, "maxSeconds"],
  ])("refuses the configuration %j", (config, message) => {
    expect(() => new OpenAiTranscriptionsProvider(config)).toThrow(message);
  });

  it("sends the language's first part as Whisper's code", () => {
    expect(whisperLanguage("en-US")).toBe("en");
    expect(whisperLanguage("pt_BR")).toBe("pt");
    expect(whisperLanguage("DE")).toBe("de");
    expect(whisperLanguage("")).toBe("");
  });

  it("is defined for the registry as the asr provider openai, with its defaults", () => {
    expect(openAiTranscriptionsDefinition).toMatchObject({ name: "openai", stage: "asr", remote: true });
    expect(openAiTranscriptionsDefinition.settings.parse({})).toEqual({
      url: "https://api.openai.com",
      apiKey: "",
      model: "whisper-1",
      requestTimeoutMs: 10_000,
      maxSeconds: 30,
    });
    const provider = openAiTranscriptionsDefinition.create(openAiTranscriptionsDefinition.settings.parse({ url: "http://127.0.0.1:9000" }), { retry: NO_WAIT, embedded: {} });
    expect(provider).toBeInstanceOf(OpenAiTranscriptionsProvider);
    expect(provider.name).toBe("openai");
    expect((provider as OpenAiTranscriptionsProvider).settings.retry).toBe(NO_WAIT);
  });
});

describe("transcriptions stand-in", () => {
  function form(fields: Record<string, string>, wav?: Uint8Array): FormData {
    const body = new FormData();
    if (wav) body.append("file", new Blob([wav], { type: "audio/wav" }), "audio.wav");
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    return body;
  }
  const wav16k = encodeWav({ sampleRate: 16_000, channels: 1, samples: tone(0.1, 16_000) });

  it.each([
    [form({ model: "whisper-1" }), "file"],
    [form({}, wav16k), "model"],
    [form({ model: "whisper-1", language: "en-US" }, wav16k), "language"],
    [form({ model: "whisper-1", response_format: "verbose_json" }, wav16k), "response_format"],
    [form({ model: "whisper-1" }, encodeWav({ sampleRate: 8000, channels: 1, samples: tone(0.1, 8000) })), "file"],
    [form({ model: "whisper-1" }, encodeWav({ sampleRate: 16_000, channels: 2, samples: tone(0.1, 16_000) })), "file"],
    [form({ model: "whisper-1" }, new Uint8Array([1, 2, 3])), "file"],
  ])("answers 400 naming the field (%#: %s)", async (body, field) => {
    const { url, standin } = await startStandin();
    const response = await fetch(`${url}/v1/audio/transcriptions`, { method: "POST", body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { param: field } });
    expect(standin.requests()).toEqual([]);
  });

  it("answers a well-formed request with {text} and leaves other paths alone", async () => {
    const { url } = await startStandin({ text: (request) => `heard ${request.file.samples.length} samples` });
    const response = await fetch(`${url}/v1/audio/transcriptions`, { method: "POST", body: form({ model: "whisper-1", language: "en", response_format: "json" }, wav16k) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: "heard 1600 samples" });
    expect((await fetch(`${url}/v1/audio/speech`, { method: "POST" })).status).toBe(404);
  });
});
