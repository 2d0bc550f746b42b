import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { pcm16ToBytes } from "../../../../../engine/audio/pcm16.js";
import { Resampler } from "../../../../../engine/audio/resampler.js";
import { OpenAiSpeechError } from "../../../../../engine/providers/tts/openai/openai-speech-error.js";
import { OpenAiSpeechTts } from "../../../../../engine/providers/tts/openai/openai-speech-tts.js";
import { OPENAI_VOICE_NAMES } from "../../../../../engine/providers/tts/openai/openai-voices.js";
import { createVadFactory } from "../../../../../engine/vad/vad-factory.js";
import { speechStandin, type SpeechStandin } from "../../../../../scripts/standins/openai-speech-standin.js";
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

/** Mounts a stand-in the way the lead does: it answers its path, anything else is 404. */
function mount(standin: SpeechStandin): Handler {
  return (req, res) => {
    if (!standin.handle(req, res)) res.writeHead(404).end();
  };
}

async function* from(pieces: string[]): AsyncIterable<string> {
  yield* pieces;
}

async function collect(frames: AsyncIterable<AudioFrame>): Promise<{ samples: Int16Array; rates: Set<number>; count: number }> {
  const parts: Int16Array[] = [];
  const rates = new Set<number>();
  for await (const frame of frames) {
    parts.push(frame.samples);
    rates.add(frame.sampleRate);
  }
  return { samples: concat(parts), rates, count: parts.length };
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

function synthesizeError(tts: OpenAiSpeechTts, pieces: string[], voiceId = "openai-alloy"): Promise<unknown> {
  return collect(tts.synthesize(from(pieces), { voiceId, signal: new AbortController().signal })).then(
    () => expect.unreachable("synthesis should have failed"),
    (error: unknown) => error,
  );
}

/** Retries as in production, without the waits. */
const NO_WAIT = { delaysMs: [0, 0], maxRetryAfterMs: 2000 };

const FIRST = "Thanks for calling Parley Dental.";
const SECOND = "How can I help you today?";

describe("OpenAiSpeechTts", () => {
  it("streams two sentences as 24 kHz audio, strictly in sentence order", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: 50, apiKey: "sk-test-key" });
    let requests = 0;
    // The first sentence answers last: arrival order is not sentence order.
    const url = await listen((req, res) => {
      if (requests++ === 0) setTimeout(() => mount(standin)(req, res), 150);
      else mount(standin)(req, res);
    });
    const tts = new OpenAiSpeechTts({ url, apiKey: "sk-test-key" });

    const audio = await collect(tts.synthesize(from([FIRST, SECOND]), { voiceId: "openai-nova", signal: new AbortController().signal }));

    expect([...audio.rates]).toEqual([24_000]);
    const expectedMs = (FIRST.length + SECOND.length) * 65;
    expect(Math.abs((audio.samples.length / 24_000) * 1000 - expectedMs)).toBeLessThanOrEqual(100);
    expect(sameSamples(audio.samples, concat([standin.audioFor(FIRST), standin.audioFor(SECOND)]))).toBe(true);
    expect(audio.count).toBeGreaterThan(2);
  });

  it("yields audio while the answer is still streaming", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: 1 });
    let response: http.ServerResponse | undefined;
    const url = await listen((req, res) => {
      response = res;
      mount(standin)(req, res);
    });
    const abort = new AbortController();
    const frames = new OpenAiSpeechTts({ url }).synthesize(from(["A long sentence that takes a few seconds to say out loud."]), {
      voiceId: "openai-alloy",
      signal: abort.signal,
    });
    const iterator = frames[Symbol.asyncIterator]();

    expect((await iterator.next()).done).toBe(false);
    expect(response?.writableEnded).toBe(false);
    abort.abort();
    expect((await iterator.next()).done).toBe(true);
  });

  it("asks for pcm with the configured model, the server's voice name and the sentence", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: Infinity });
    const url = await listen(mount(standin));
    const tts = new OpenAiSpeechTts({ url, model: "tts-1-hd", speed: 1.25 });

    await collect(tts.synthesize(from(["  Hello there.  ", "...", " 😀 "]), { voiceId: "openai-onyx", signal: new AbortController().signal }));

    // Pieces with nothing to say are not sent.
    expect(standin.requests()).toEqual([{ model: "tts-1-hd", input: "Hello there.", voice: "onyx", response_format: "pcm", speed: 1.25 }]);
  });

  it("carries a byte split across network chunks over to the next chunk", async () => {
    const samples = Int16Array.from({ length: 300 }, (_, i) => ((i * 2719) % 65_536) - 32_768);
    const bytes = pcm16ToBytes(samples);
    const url = await listen(async (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "audio/pcm" });
      // Odd-sized writes, apart in time so they reach the client as separate chunks.
      const sizes = [1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41];
      for (let at = 0, i = 0; at < bytes.length; i++) {
        const size = sizes[i % sizes.length]!;
        res.write(bytes.subarray(at, at + size));
        at += size;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      res.end();
    });
    const tts = new OpenAiSpeechTts({ url, sampleRate: 16_000 });

    const audio = await collect(tts.synthesize(from(["Odd."]), { voiceId: "openai-echo", signal: new AbortController().signal }));

    expect([...audio.rates]).toEqual([16_000]);
    expect(audio.count).toBeGreaterThan(1);
    expect(sameSamples(audio.samples, samples)).toBe(true);
  });

  it("rejects an unknown voice before sending anything", async () => {
    let requests = 0;
    const url = await listen((_req, res) => {
      requests++;
      res.end();
    });
    const tts = new OpenAiSpeechTts({ url });

    const error = await synthesizeError(tts, [FIRST], "flite-rms");

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('unknown OpenAI speech voice "flite-rms"');
    expect(requests).toBe(0);
  });

  it("fails with status 401, not retryable, on a wrong key, and never quotes the key", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, apiKey: "sk-right-key" });
    const url = await listen(mount(standin));
    const tts = new OpenAiSpeechTts({ url, apiKey: "sk-wrong-key-4242" });

    const error = await synthesizeError(tts, [FIRST]);

    expect(error).toBeInstanceOf(OpenAiSpeechError);
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect((error as Error).message).toContain("Incorrect API key provided.");
    expect((error as Error).message).not.toContain("sk-wrong-key-4242");
    expect(standin.requests()).toEqual([]);
  });

  it.each([
    [400, false],
    [404, false],
    [429, true],
    [500, true],
    [503, true],
  ])("fails with status %i, retryable %s, quoting the server without the key", async (status, retryable) => {
    // A careless server that echoes the credentials it got.
    const url = await listen((req, res) => {
      req.resume();
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `it went wrong for ${req.headers.authorization}`, type: "server_error" } }));
    });
    const tts = new OpenAiSpeechTts({ url, apiKey: "sk-secret-0000", retry: NO_WAIT });

    const error = await synthesizeError(tts, [FIRST]);

    expect(error).toBeInstanceOf(OpenAiSpeechError);
    expect(error).toMatchObject({ status, retryable });
    expect((error as Error).message).toContain("it went wrong for Bearer");
    expect((error as Error).message).not.toContain("sk-secret-0000");
  });

  it("yields the sentences before a failing one, then fails", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: Infinity });
    let requests = 0;
    const url = await listen((req, res) => {
      // Every request after the first fails, the retries too.
      if (requests++ >= 1) {
        req.resume();
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "model crashed" } }));
      } else {
        mount(standin)(req, res);
      }
    });
    const tts = new OpenAiSpeechTts({ url, retry: NO_WAIT });
    const received: Int16Array[] = [];

    const failure = (async () => {
      for await (const frame of tts.synthesize(from([FIRST, SECOND, "Never reached."]), { voiceId: "openai-sage", signal: new AbortController().signal })) {
        received.push(frame.samples);
      }
    })();

    await expect(failure).rejects.toMatchObject({ status: 500, retryable: true });
    expect(sameSamples(concat(received), standin.audioFor(FIRST))).toBe(true);
  });

  it("fails retryably, without a status, when no audio comes in time or nobody listens", async () => {
    const silent = await listen((req) => req.resume());
    const timeout = await synthesizeError(new OpenAiSpeechTts({ url: silent, requestTimeoutMs: 100, retry: NO_WAIT }), [FIRST]);
    expect(timeout).toBeInstanceOf(OpenAiSpeechError);
    expect(timeout).toMatchObject({ status: null, retryable: true });
    expect((timeout as Error).message).toContain("no audio");

    const refused = await synthesizeError(new OpenAiSpeechTts({ url: `http://127.0.0.1:${await closedLoopbackPort()}`, retry: NO_WAIT }), [FIRST]);
    expect(refused).toBeInstanceOf(OpenAiSpeechError);
    expect(refused).toMatchObject({ status: null, retryable: true });
  });

  it("stops at once on abort: the iteration ends and every request in flight is cancelled", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: 1 });
    const responses: Array<{ finished: boolean | undefined }> = [];
    const url = await listen((req, res) => {
      const seen: { finished: boolean | undefined } = { finished: undefined };
      responses.push(seen);
      res.on("close", () => (seen.finished = res.writableFinished));
      mount(standin)(req, res);
    });
    const long = "This sentence goes on for quite a while, long enough to take several seconds to play.";
    const abort = new AbortController();
    const iterator = new OpenAiSpeechTts({ url }).synthesize(from([long, long]), { voiceId: "openai-coral", signal: abort.signal })[Symbol.asyncIterator]();

    const first = await iterator.next();
    expect(first.done).toBe(false);
    // The second sentence is requested while the first one streams.
    await vi.waitFor(() => expect(standin.requests()).toHaveLength(2), { timeout: 4000 });
    abort.abort();

    expect((await iterator.next()).done).toBe(true);
    await vi.waitFor(() => expect(responses.map((r) => r.finished)).toEqual([false, false]), { timeout: 4000 });
  });

  it("cancels its requests when the consumer stops early", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: 1 });
    let finished: boolean | undefined;
    const url = await listen((req, res) => {
      res.on("close", () => (finished = res.writableFinished));
      mount(standin)(req, res);
    });
    const tts = new OpenAiSpeechTts({ url });

    for await (const _ of tts.synthesize(from(["A sentence long enough to still be streaming when the consumer leaves."]), {
      voiceId: "openai-ash",
      signal: new AbortController().signal,
    })) {
      break;
    }

    await vi.waitFor(() => expect(finished).toBe(false), { timeout: 4000 });
  });

  it("sends a sentence's request again after a 503 and speaks its audio", async () => {
    const standin = speechStandin({ firstByteDelayMs: 0, realtimeFactor: Infinity });
    let requests = 0;
    const url = await listen((req, res) => {
      if (requests++ === 0) {
        req.resume();
        res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "overloaded" } }));
      } else {
        mount(standin)(req, res);
      }
    });

    const audio = await collect(new OpenAiSpeechTts({ url }).synthesize(from([FIRST]), { voiceId: "openai-alloy", signal: new AbortController().signal }));

    expect(sameSamples(audio.samples, standin.audioFor(FIRST))).toBe(true);
    expect(requests).toBe(2);
  });

  it("does not send a request again after a 401", async () => {
    let requests = 0;
    const url = await listen((req, res) => {
      requests++;
      req.resume();
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "Incorrect API key provided." } }));
    });
    const error = await synthesizeError(new OpenAiSpeechTts({ url, retry: NO_WAIT }), [FIRST]);
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(requests).toBe(1);
  });

  it("takes a server's Retry-After, and does not wait for one longer than a caller can", async () => {
    let requests = 0;
    const url = await listen((req, res) => {
      requests++;
      req.resume();
      res.writeHead(429, { "content-type": "application/json", "retry-after": "30" }).end(JSON.stringify({ error: { message: "Rate limit reached." } }));
    });
    const error = await synthesizeError(new OpenAiSpeechTts({ url }), [FIRST]);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 30_000 });
    expect(requests).toBe(1);
  });

  it("does not send a request again once its audio has started", async () => {
    let requests = 0;
    const url = await listen((req, res) => {
      requests++;
      req.resume();
      res.writeHead(200, { "content-type": "audio/pcm" });
      res.write(Buffer.alloc(4800));
      // The connection breaks after the first audio.
      setTimeout(() => res.destroy(), 20);
    });
    const received: Int16Array[] = [];
    const failure = (async () => {
      for await (const frame of new OpenAiSpeechTts({ url, retry: NO_WAIT }).synthesize(from([FIRST]), { voiceId: "openai-alloy", signal: new AbortController().signal })) {
        received.push(frame.samples);
      }
    })();
    await expect(failure).rejects.toMatchObject({ status: null, retryable: true });
    expect(concat(received).length).toBe(2400);
    expect(requests).toBe(1);
  });

  it("stops at once when aborted while waiting to send a request again", async () => {
    let requests = 0;
    const url = await listen((req, res) => {
      requests++;
      req.resume();
      res.writeHead(503).end();
    });
    // A minute's wait: far past the test's timeout if the abort were not honoured.
    const tts = new OpenAiSpeechTts({ url, retry: { delaysMs: [60_000], maxRetryAfterMs: 2000 } });
    const abort = new AbortController();
    const audio = collect(tts.synthesize(from([FIRST]), { voiceId: "openai-alloy", signal: abort.signal }));
    await vi.waitFor(() => expect(requests).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    abort.abort();
    expect((await audio).count).toBe(0);
    expect(requests).toBe(1);
  });

  it("lists OpenAI's voices with the openai- prefix, or the configured names at the configured rate", () => {
    const voices = new OpenAiSpeechTts().voices();
    expect(voices.map((v) => v.id)).toEqual(OPENAI_VOICE_NAMES.map((name) => `openai-${name}`));
    expect(voices.find((v) => v.id === "openai-nova")).toEqual({
      id: "openai-nova",
      provider: "openai",
      name: "nova",
      language: "en-US",
      gender: "female",
      sample_rate: 24_000,
    });
    expect(voices.find((v) => v.id === "openai-onyx")?.gender).toBe("male");
    expect(voices.find((v) => v.id === "openai-alloy")?.gender).toBe("neutral");

    expect(new OpenAiSpeechTts({ voices: ["af_bella", "am_adam"], sampleRate: 22_050 }).voices()).toEqual([
      { id: "openai-af_bella", provider: "openai", name: "af_bella", language: "en-US", gender: "neutral", sample_rate: 22_050 },
      { id: "openai-am_adam", provider: "openai", name: "am_adam", language: "en-US", gender: "neutral", sample_rate: 22_050 },
    ]);
  });

  it.each([
    [{ url: "ftp://example.com" }, "http(s) URL"],
    [{ url: "not a url" }, "http(s) URL"],
    [{ voices: [] }, "at least one voice"],
    [{ voices: ["a", "a"] }, "unique"],
    [{ requestTimeoutMs: 0 }, "requestTimeoutMs"],
    [{ sampleRate: 1000 }, "sampleRate"],
    [{ speed: 5 }, "speed"],
  ])("refuses the configuration %j", (config, message) => {
    expect(() => new OpenAiSpeechTts(config)).toThrow(message);
  });
});

describe("speech stand-in", () => {
  async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${url}/v1/audio/speech`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  }

  it.each([
    [{ input: "Hi.", voice: "alloy", response_format: "pcm" }, "model"],
    [{ model: "tts-1", voice: "alloy", response_format: "pcm" }, "input"],
    [{ model: "tts-1", input: "Hi.", response_format: "pcm" }, "voice"],
    [{ model: "tts-1", input: "Hi.", voice: "alloy" }, "response_format"],
    [{ model: "tts-1", input: "Hi.", voice: "alloy", response_format: "mp3" }, "response_format"],
    [{ model: "tts-1", input: "Hi.", voice: "alloy", response_format: "pcm", speed: 9 }, "speed"],
  ])("answers 400 naming the field for %j", async (body, field) => {
    const url = await listen(mount(speechStandin({ firstByteDelayMs: 0 })));
    const response = await post(url, body);
    expect(response.status).toBe(400);
    const json = (await response.json()) as { error: { message: string; param: string } };
    expect(json.error.param).toBe(field);
    expect(json.error.message).toContain(field);
  });

  it("answers 401 in OpenAI's shape without the right key, and leaves other paths alone", async () => {
    const url = await listen(mount(speechStandin({ firstByteDelayMs: 0, apiKey: "sk-standin" })));
    const body = { model: "tts-1", input: "Hi.", voice: "alloy", response_format: "pcm" };

    const unauthorized = await post(url, body, { authorization: "Bearer sk-other" });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ error: { code: "invalid_api_key", type: "invalid_request_error" } });

    const authorized = await post(url, body, { authorization: "Bearer sk-standin" });
    expect(authorized.status).toBe(200);
    expect(authorized.headers.get("transfer-encoding")).toBe("chunked");
    expect((await authorized.arrayBuffer()).byteLength).toBe(2 * Math.round(3 * 0.065 * 24_000));

    expect((await fetch(`${url}/v1/audio/transcriptions`, { method: "POST" })).status).toBe(404);
  });

  it("answers the same bytes for the same input, and other bytes for another", async () => {
    const url = await listen(mount(speechStandin({ firstByteDelayMs: 0, realtimeFactor: Infinity })));
    const speak = async (input: string) => Buffer.from(await (await post(url, { model: "tts-1", input, voice: "alloy", response_format: "pcm" })).arrayBuffer());
    const once = await speak("The same sentence twice.");
    expect((await speak("The same sentence twice.")).equals(once)).toBe(true);
    expect((await speak("Another sentence, same size.")).subarray(0, 4000).equals(once.subarray(0, 4000))).toBe(false);
  });

  it("speaks audio that the Silero VAD hears as speech", async () => {
    const audio = speechStandin({ firstByteDelayMs: 0 }).audioFor("I can book you in on Tuesday at ten thirty in the morning.");
    const resampler = new Resampler({ inputRate: 24_000, outputRate: 16_000 });
    const samples = concat([resampler.push(audio), resampler.flush()]);
    const factory = await createVadFactory("silero");
    const vad = factory.createVad(16_000);
    let speech = 0;
    let frames = 0;
    try {
      for (let at = 0; at + 320 <= samples.length; at += 320, frames++) {
        if ((await vad.process({ samples: samples.slice(at, at + 320), sampleRate: 16_000 })) > 0.5) speech++;
      }
    } finally {
      await vad.close();
      await factory.close();
    }
    expect(speech / frames).toBeGreaterThan(0.8);
    let peak = 0;
    for (const sample of audio) peak = Math.max(peak, Math.abs(sample));
    expect(peak).toBeGreaterThan(6000);
    expect(peak).toBeLessThanOrEqual(8000);
  });
});
