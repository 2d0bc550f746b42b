import http from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pcm16ToBytes } from "../../../../../engine/audio/pcm16.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";
import { elevenLabsDefinition } from "../../../../../engine/providers/tts/elevenlabs/index.js";
import { ElevenLabsError } from "../../../../../engine/providers/tts/elevenlabs/elevenlabs-error.js";
import { ElevenLabsTts } from "../../../../../engine/providers/tts/elevenlabs/elevenlabs-tts.js";
import type { SpeechChunk } from "../../../../../engine/providers/tts/tts-provider.js";
import { elevenLabsStandin, type ElevenLabsStandin } from "../../../../../scripts/standins/elevenlabs-standin.js";
import { closedLoopbackPort } from "../../../../helpers/loopback-peers.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

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

/** A real HTTP server on 127.0.0.1; resolves to its base URL. */
async function listen(handler: Handler): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The stand-in on a loopback server: it answers its path, anything else is 404. */
async function serve(standin: ElevenLabsStandin): Promise<string> {
  return listen((req, res) => {
    if (!standin.handle(req, res)) res.writeHead(404).end();
  });
}

async function* from(pieces: string[]): AsyncIterable<string> {
  yield* pieces;
}

interface Collected {
  samples: Int16Array;
  rates: Set<number>;
  /** Each chunk's piece index, in arrival order. */
  pieces: Array<number | undefined>;
  /** Samples per piece index. */
  byPiece: Map<number | undefined, Int16Array[]>;
}

async function collect(chunks: AsyncIterable<SpeechChunk>): Promise<Collected> {
  const parts: Int16Array[] = [];
  const result: Collected = { samples: new Int16Array(0), rates: new Set(), pieces: [], byPiece: new Map() };
  for await (const chunk of chunks) {
    parts.push(chunk.samples);
    result.rates.add(chunk.sampleRate);
    result.pieces.push(chunk.piece);
    result.byPiece.set(chunk.piece, [...(result.byPiece.get(chunk.piece) ?? []), chunk.samples]);
  }
  result.samples = concat(parts);
  return result;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Samples compared as bytes: one readable failure instead of a diff of thousands of numbers. */
function sameSamples(actual: Int16Array, expected: Int16Array): boolean {
  return actual.length === expected.length && pcm16ToBytes(actual).equals(pcm16ToBytes(expected));
}

function synthesizeError(tts: ElevenLabsTts, pieces: string[], voiceId = "elevenlabs-rachel"): Promise<unknown> {
  return collect(tts.synthesize(from(pieces), { voiceId, signal: new AbortController().signal })).then(
    () => expect.unreachable("synthesis should have failed"),
    (error: unknown) => error,
  );
}

/** Retries as in production, without the waits. */
const NO_WAIT = { delaysMs: [0, 0], maxRetryAfterMs: 2000 };
const KEY = "xi-test-key-7f3a9c";
const RACHEL = "21m00Tcm4TlvDq8EAc40";
const ADAM = "pNInz6obpgDQGcFmaJgB";

const FIRST = "Thanks for calling Parley Dental.";
const SECOND = "How can I help you today?";

describe("ElevenLabsTts", () => {
  it.each([16_000, 24_000])("speaks two sentences at %i Hz, in order, each chunk tagged with its piece", async (sampleRate) => {
    const standin = elevenLabsStandin({ apiKey: KEY, voiceIds: [RACHEL, ADAM] });
    let requests = 0;
    // The first sentence answers last: arrival order is not sentence order.
    const url = await listen((req, res) => {
      const answer = () => standin.handle(req, res) || res.writeHead(404).end();
      if (requests++ === 0) setTimeout(answer, 150);
      else answer();
    });
    const tts = new ElevenLabsTts({ url, apiKey: KEY, sampleRate, retry: NO_WAIT });

    const audio = await collect(tts.synthesize(from([FIRST, SECOND]), { voiceId: "elevenlabs-adam", signal: new AbortController().signal }));

    // Recorded as they reach the stand-in: the delayed first one last.
    expect(standin.requests()).toEqual([
      { voiceId: ADAM, outputFormat: `pcm_${sampleRate}`, text: SECOND, modelId: "eleven_flash_v2_5" },
      { voiceId: ADAM, outputFormat: `pcm_${sampleRate}`, text: FIRST, modelId: "eleven_flash_v2_5" },
    ]);
    expect([...audio.rates]).toEqual([sampleRate]);
    expect(sameSamples(audio.samples, concat([standin.audioFor(FIRST, sampleRate), standin.audioFor(SECOND, sampleRate)]))).toBe(true);
    // Several chunks per sentence, all of piece 0 before any of piece 1.
    expect(audio.pieces.filter((p) => p === 0).length).toBeGreaterThan(1);
    expect(audio.pieces).toEqual([...audio.pieces].sort());
    expect(sameSamples(concat(audio.byPiece.get(1)!), standin.audioFor(SECOND, sampleRate))).toBe(true);
  });

  it("sends the configured model, skips pieces with nothing to say and keeps the pieces' indexes", async () => {
    const standin = elevenLabsStandin();
    const url = await serve(standin);
    const tts = new ElevenLabsTts({ url, model: "eleven_turbo_v2_5", voices: "lily=pFZP5JQG7iQjIQuC4Bku" });

    const audio = await collect(tts.synthesize(from(["  Hello there.  ", "...", " 😀 ", "Bye."]), { voiceId: "elevenlabs-lily", signal: new AbortController().signal }));

    expect(standin.requests()).toEqual([
      { voiceId: "pFZP5JQG7iQjIQuC4Bku", outputFormat: "pcm_16000", text: "Hello there.", modelId: "eleven_turbo_v2_5" },
      { voiceId: "pFZP5JQG7iQjIQuC4Bku", outputFormat: "pcm_16000", text: "Bye.", modelId: "eleven_turbo_v2_5" },
    ]);
    expect(new Set(audio.pieces)).toEqual(new Set([0, 3]));
  });

  it("joins a sample cut in half by a chunk boundary", async () => {
    // 101-byte chunks: every boundary falls in the middle of a sample.
    const standin = elevenLabsStandin({ chunkBytes: 101, chunkDelayMs: 1 });
    const url = await serve(standin);

    const audio = await collect(new ElevenLabsTts({ url }).synthesize(from(["Odd."]), { voiceId: "elevenlabs-rachel", signal: new AbortController().signal }));

    expect(audio.pieces.length).toBeGreaterThan(10);
    expect(sameSamples(audio.samples, standin.audioFor("Odd.", 16_000))).toBe(true);
  });

  it("sends a sentence again after a 429 with Retry-After, and speaks it", async () => {
    const standin = elevenLabsStandin();
    standin.failNext({
      status: 429,
      retryAfter: "1",
      body: JSON.stringify({ detail: { status: "too_many_concurrent_requests", message: "Too many concurrent requests." } }),
    });
    const url = await serve(standin);

    const audio = await collect(new ElevenLabsTts({ url, retry: NO_WAIT }).synthesize(from([FIRST]), { voiceId: "elevenlabs-rachel", signal: new AbortController().signal }));

    expect(standin.requests()).toHaveLength(2);
    expect(sameSamples(audio.samples, standin.audioFor(FIRST, 16_000))).toBe(true);
  });

  it("gives up at once on a Retry-After longer than a caller can wait", async () => {
    const standin = elevenLabsStandin();
    standin.failNext({ status: 429, retryAfter: "30" });
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url, retry: NO_WAIT }), [FIRST]);

    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 30_000, stage: "tts", provider: "elevenlabs" });
    expect(standin.requests()).toHaveLength(1);
  });

  it.each([500, 503])("sends a sentence again after %i, and speaks it", async (status) => {
    const standin = elevenLabsStandin();
    standin.failNext({ status });
    standin.failNext({ status });
    const url = await serve(standin);

    const audio = await collect(new ElevenLabsTts({ url, retry: NO_WAIT }).synthesize(from([FIRST]), { voiceId: "elevenlabs-rachel", signal: new AbortController().signal }));

    expect(standin.requests()).toHaveLength(3);
    expect(sameSamples(audio.samples, standin.audioFor(FIRST, 16_000))).toBe(true);
  });

  it("fails retryably with the status when 5xx outlasts the retries", async () => {
    const standin = elevenLabsStandin();
    for (let i = 0; i < 3; i++) standin.failNext({ status: 500, body: "<html>Internal Server Error</html>", contentType: "text/html" });
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url, retry: NO_WAIT }), [FIRST]);

    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ status: 500, retryable: true });
    expect((error as Error).message).toContain("<html>Internal Server Error</html>");
    expect(standin.requests()).toHaveLength(3);
  });

  it.each([
    [400, JSON.stringify({ detail: { status: "invalid_model", message: "The model does not exist." } }), "The model does not exist. (invalid_model)"],
    [401, JSON.stringify({ detail: { status: "invalid_api_key", message: "Invalid API key" } }), "Invalid API key (invalid_api_key)"],
    [422, JSON.stringify({ detail: [{ type: "missing", loc: ["body", "text"], msg: "Field required" }] }), "body.text: Field required"],
  ])("does not send a sentence again after %i, and quotes ElevenLabs' reason", async (status, body, reason) => {
    const standin = elevenLabsStandin();
    standin.failNext({ status, body });
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url, retry: NO_WAIT }), [FIRST]);

    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status, retryable: false });
    expect((error as Error).message).toContain(reason);
    expect(standin.requests()).toHaveLength(1);
  });

  it("is refused with 401 for a wrong key, and never quotes the key", async () => {
    const standin = elevenLabsStandin({ apiKey: KEY });
    const url = await serve(standin);
    const tts = new ElevenLabsTts({ url, apiKey: "xi-wrong-key-4242", retry: NO_WAIT });

    const error = await synthesizeError(tts, [FIRST]);

    expect(error).toMatchObject({ status: 401, retryable: false });
    expect((error as Error).message).toContain("Invalid API key");
    expect(standin.requests()).toEqual([]);
    expect(inspect(tts)).not.toContain("xi-wrong-key-4242");
    expect(JSON.stringify(tts)).not.toContain("xi-wrong-key-4242");
  });

  it("keeps the key out of errors even when the server echoes it", async () => {
    // A careless server (or proxy) that quotes the credentials it got.
    const url = await listen((req, res) => {
      req.resume();
      const key = String(req.headers["xi-api-key"]);
      if (req.url?.includes("pFZP5JQG7iQjIQuC4Bku")) res.writeHead(200, { "content-type": "text/plain" }).end(`proxy login for ${key}`);
      else res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ detail: { status: "error", message: `failed for ${key}` } }));
    });
    const tts = new ElevenLabsTts({ url, apiKey: KEY, voices: "rachel=21m00Tcm4TlvDq8EAc40,lily=pFZP5JQG7iQjIQuC4Bku", retry: NO_WAIT });

    for (const voiceId of ["elevenlabs-rachel", "elevenlabs-lily"]) {
      const error = await synthesizeError(tts, [FIRST], voiceId);
      expect(error).toBeInstanceOf(ElevenLabsError);
      expect((error as Error).message).toContain("[api key]");
      expect((error as Error).message).not.toContain(KEY);
      expect(inspect(error)).not.toContain(KEY);
    }
  });

  it("fails retryably, without a status, when the answer's headers come and then nothing", async () => {
    const standin = elevenLabsStandin();
    for (let i = 0; i < 3; i++) standin.failNext({ stall: "before-audio" });
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url, requestTimeoutMs: 300, retry: NO_WAIT }), [FIRST]);

    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ status: null, retryable: true });
    expect((error as Error).message).toContain("no audio from ElevenLabs");
    expect(standin.requests()).toHaveLength(3);
    // Each stalled answer was given up, its connection closed.
    await vi.waitFor(() => expect(standin.cutOff()).toBe(3));
  });

  it("fails once a stream stalls after its first audio, without sending the sentence again", async () => {
    const standin = elevenLabsStandin();
    standin.failNext({ stall: "after-first-chunk" });
    const url = await serve(standin);
    const received: Int16Array[] = [];

    const failure = (async () => {
      for await (const chunk of new ElevenLabsTts({ url, requestTimeoutMs: 300, retry: NO_WAIT }).synthesize(from([FIRST]), {
        voiceId: "elevenlabs-rachel",
        signal: new AbortController().signal,
      })) {
        received.push(chunk.samples);
      }
    })();

    await expect(failure).rejects.toMatchObject({ status: null, retryable: true, message: expect.stringContaining("no audio") });
    expect(concat(received).length).toBe(1600);
    expect(standin.requests()).toHaveLength(1);
  });

  it("fails with a ProviderError, not a TypeError, on a 200 that is not audio", async () => {
    const standin = elevenLabsStandin();
    standin.failNext({ status: 200, body: '{"detail": {"status": "quota_exceeded", "mess', contentType: "application/json" });
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url, retry: NO_WAIT }), [FIRST]);

    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ status: 200, retryable: false });
    expect((error as Error).message).toContain("instead of PCM audio");
    expect(standin.requests()).toHaveLength(1);
  });

  it.each(["", "null", "[1, 2]", '{"detail": 5}', '{"detail": [null, {"loc": 3}]}', "\u0000\u00ff"])("fails with an ElevenLabsError on the error body %j", async (body) => {
    const standin = elevenLabsStandin();
    standin.failNext({ status: 400, body });
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url, retry: NO_WAIT }), [FIRST]);

    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ status: 400, retryable: false });
  });

  it("stops at once on abort mid-stream, and closes every request in flight", async () => {
    // Slow chunks: both sentences are still streaming when the abort comes.
    const standin = elevenLabsStandin({ chunkBytes: 320, chunkDelayMs: 50 });
    const url = await serve(standin);
    const abort = new AbortController();
    const iterator = new ElevenLabsTts({ url }).synthesize(from([FIRST, SECOND]), { voiceId: "elevenlabs-rachel", signal: abort.signal })[Symbol.asyncIterator]();

    expect((await iterator.next()).done).toBe(false);
    // The second sentence is requested while the first one streams.
    await vi.waitFor(() => expect(standin.requests()).toHaveLength(2));
    abort.abort();

    expect((await iterator.next()).done).toBe(true);
    await vi.waitFor(() => expect(standin.cutOff()).toBe(2));
  });

  it("closes its requests when the consumer stops early", async () => {
    const standin = elevenLabsStandin({ chunkBytes: 320, chunkDelayMs: 50 });
    const url = await serve(standin);

    for await (const _ of new ElevenLabsTts({ url }).synthesize(from([FIRST]), { voiceId: "elevenlabs-rachel", signal: new AbortController().signal })) break;

    await vi.waitFor(() => expect(standin.cutOff()).toBe(1));
  });

  it("fails retryably, without a status, when nobody listens", async () => {
    const error = await synthesizeError(new ElevenLabsTts({ url: `http://127.0.0.1:${await closedLoopbackPort()}`, apiKey: KEY, retry: NO_WAIT }), [FIRST]);
    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ status: null, retryable: true });
    expect((error as Error).message).not.toContain(KEY);
  });

  it("refuses an unknown voice with a non-retryable ProviderError before sending anything", async () => {
    const standin = elevenLabsStandin();
    const url = await serve(standin);

    const error = await synthesizeError(new ElevenLabsTts({ url }), [FIRST], "openai-nova");

    expect(error).toBeInstanceOf(ElevenLabsError);
    expect(error).toMatchObject({ retryable: false, status: null });
    expect((error as Error).message).toContain('unknown ElevenLabs voice "openai-nova"');
    expect(standin.requests()).toEqual([]);
  });

  it("lists the default premade voices, or the configured ones, at the configured rate", () => {
    const voices = new ElevenLabsTts().voices();
    expect(voices.map((v) => v.id)).toEqual(["elevenlabs-rachel", "elevenlabs-adam", "elevenlabs-sarah", "elevenlabs-george"]);
    expect(voices[0]).toEqual({ id: "elevenlabs-rachel", provider: "elevenlabs", name: "rachel", language: "en-US", gender: "female", sample_rate: 16_000 });
    expect(voices[1]?.gender).toBe("male");

    expect(new ElevenLabsTts({ voices: " lily = pFZP5JQG7iQjIQuC4Bku , ", sampleRate: 24_000 }).voices()).toEqual([
      { id: "elevenlabs-lily", provider: "elevenlabs", name: "lily", language: "en-US", gender: "neutral", sample_rate: 24_000 },
    ]);
  });

  it.each([
    [{ url: "ftp://example.com" }, "http(s) URL"],
    [{ url: "not a url" }, "http(s) URL"],
    [{ voices: "," }, "at least one voice"],
    [{ voices: "rachel" }, "name=voice_id"],
    [{ voices: "rachel=../../v1/user" }, "name=voice_id"],
    [{ voices: "rachel=abc/stream?x" }, "name=voice_id"],
    [{ voices: "a=abc,a=def" }, "unique"],
    [{ model: " " }, "model"],
    [{ sampleRate: 44_100 }, "sampleRate"],
    [{ requestTimeoutMs: 0 }, "requestTimeoutMs"],
  ])("refuses the configuration %j", (config, message) => {
    expect(() => new ElevenLabsTts(config)).toThrow(message);
  });
});

describe("elevenLabsDefinition", () => {
  it("has flat settings with defaults and creates the provider with the engine's retry policy", async () => {
    expect(elevenLabsDefinition).toMatchObject({ name: "elevenlabs", stage: "tts", remote: true });
    const defaults = elevenLabsDefinition.settings.parse({});
    expect(defaults).toEqual({
      url: "https://api.elevenlabs.io",
      apiKey: "",
      model: "eleven_flash_v2_5",
      voices: "rachel=21m00Tcm4TlvDq8EAc40,adam=pNInz6obpgDQGcFmaJgB,sarah=EXAVITQu4vr4xnSDxMaL,george=JBFqnCBsd6RMkjVDRZzb",
      sampleRate: 16_000,
      requestTimeoutMs: 10_000,
    });
    expect(() => elevenLabsDefinition.settings.parse({ sampleRate: 44_100 })).toThrow();
    expect(elevenLabsDefinition.settings.parse({ sampleRate: "24000", requestTimeoutMs: "500" })).toMatchObject({ sampleRate: 24_000, requestTimeoutMs: 500 });

    const standin = elevenLabsStandin({ apiKey: KEY });
    standin.failNext({ status: 503 });
    const url = await serve(standin);
    const retried: unknown[] = [];
    // Only the retry policy concerns a remote provider; nothing embedded is shared out.
    const context = { retry: { ...NO_WAIT, onRetry: (error: unknown) => void retried.push(error) }, embedded: {} };
    const tts = elevenLabsDefinition.create(elevenLabsDefinition.settings.parse({ url, apiKey: KEY, sampleRate: 22_050 }), context);

    const audio = await collect(tts.synthesize(from([FIRST]), { voiceId: "elevenlabs-george", signal: new AbortController().signal }));

    expect(tts.name).toBe("elevenlabs");
    expect([...audio.rates]).toEqual([22_050]);
    expect(retried).toHaveLength(1);
    expect(standin.requests().map((r) => r.outputFormat)).toEqual(["pcm_22050", "pcm_22050"]);
  });
});

describe("ElevenLabs stand-in", () => {
  async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
  }

  it("checks the key, the voice, the output format and the body, in ElevenLabs' error shapes", async () => {
    const url = await serve(elevenLabsStandin({ apiKey: KEY, voiceIds: [RACHEL] }));
    const path = `/v1/text-to-speech/${RACHEL}/stream?output_format=pcm_16000`;
    const good = { text: "Hi.", model_id: "eleven_flash_v2_5" };

    expect(await (await post(url, path, good, { "xi-api-key": "other" })).json()).toEqual({ detail: { status: "invalid_api_key", message: "Invalid API key" } });
    const auth = { "xi-api-key": KEY };
    expect((await post(url, `/v1/text-to-speech/${ADAM}/stream?output_format=pcm_16000`, good, auth)).status).toBe(404);
    expect((await post(url, `/v1/text-to-speech/${RACHEL}/stream`, good, auth)).status).toBe(400);
    expect((await post(url, `/v1/text-to-speech/${RACHEL}/stream?output_format=pcm_12345`, good, auth)).status).toBe(400);
    const missing = await post(url, path, { model_id: "eleven_flash_v2_5" }, auth);
    expect(missing.status).toBe(422);
    expect(await missing.json()).toMatchObject({ detail: [{ loc: ["body", "text"], msg: "Field required" }] });
    expect((await post(url, path, "{not json", auth)).status).toBe(422);

    const ok = await post(url, path, good, auth);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("transfer-encoding")).toBe("chunked");
    expect((await ok.arrayBuffer()).byteLength).toBe(2 * Math.round(3 * 0.065 * 16_000));
    expect((await fetch(`${url}/v1/voices`)).status).toBe(404);
  });
});
