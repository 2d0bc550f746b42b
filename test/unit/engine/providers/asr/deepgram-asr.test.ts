import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocketServer } from "ws";
import { samplesPerFrame, type AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import type { AsrResult, AsrSession } from "../../../../../engine/providers/asr/asr-provider.js";
import { DeepgramProvider, type DeepgramConfig } from "../../../../../engine/providers/asr/deepgram/deepgram-provider.js";
import { AsyncQueue } from "../../../../../engine/stream/async-queue.js";
import { deepgramStandin, type DeepgramStandin, type DeepgramStandinOptions } from "../../../../../scripts/standins/deepgram-standin.js";

const never = new AbortController().signal;
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => void server.closeAllConnections());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The stand-in on a loopback HTTP server; anything but /v1/listen is refused. */
async function startStandin(options: Partial<DeepgramStandinOptions> = {}): Promise<{ url: string; standin: DeepgramStandin }> {
  const standin = deepgramStandin({ finalDelayMs: 20, ...options });
  const server = http.createServer((_request, response) => response.writeHead(404).end());
  server.on("upgrade", (request, socket, head) => {
    if (!standin.handleUpgrade(request, socket, head)) socket.destroy();
  });
  const url = await listen(server);
  cleanups.push(() => standin.close());
  return { url, standin };
}

async function openSession(config: DeepgramConfig, sampleRate = 16000): Promise<AsrSession> {
  const session = await new DeepgramProvider(config).open({ language: "en-US", sampleRate, signal: never });
  cleanups.push(() => session.close());
  return session;
}

/** `count` 20 ms frames of a deterministic signal with negative and positive samples. */
function frames(count: number, sampleRate: number, seed = 1): AudioFrame[] {
  const size = samplesPerFrame(sampleRate);
  return Array.from({ length: count }, (_, frame) => {
    const samples = new Int16Array(size);
    for (let i = 0; i < size; i++) samples[i] = ((frame * size + i) * 7919 * seed) % 65536 - 32768;
    return { samples, sampleRate };
  });
}

async function* stream(items: AudioFrame[]): AsyncGenerator<AudioFrame> {
  for (const item of items) {
    await new Promise((resolve) => setImmediate(resolve));
    yield item;
  }
}

async function collect(results: AsyncIterable<AsrResult>): Promise<AsrResult[]> {
  const all: AsrResult[] = [];
  for await (const result of results) all.push(result);
  return all;
}

/** Reads results until the first partial, then hands back the rest of the iteration. */
async function untilPartial(results: AsyncIterable<AsrResult>): Promise<{ first: AsrResult; rest: Promise<AsrResult[]> }> {
  const iterator = results[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new Error("the iteration ended without a result");
  const rest = (async () => {
    const all: AsrResult[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) all.push(next.value);
    return all;
  })();
  return { first: first.value, rest };
}

function littleEndianSha256(items: AudioFrame[]): { bytes: number; sha256: string } {
  const hash = createHash("sha256");
  let bytes = 0;
  for (const { samples } of items) {
    const buffer = Buffer.alloc(samples.length * 2);
    samples.forEach((sample, i) => buffer.writeInt16LE(sample, i * 2));
    hash.update(buffer);
    bytes += buffer.length;
  }
  return { bytes, sha256: hash.digest("hex") };
}

describe("DeepgramProvider against the stand-in", () => {
  it("gives each utterance its partials, then its own final, on one stream for the call", async () => {
    const { url, standin } = await startStandin({ interimEveryMs: 100 });
    const session = await openSession({ url });

    const first = await collect(session.transcribe(stream(frames(15, 16000)), never));
    const second = await collect(session.transcribe(stream(frames(15, 16000, 3)), never));

    expect(first).toEqual([
      { type: "partial", text: "stand" },
      { type: "partial", text: "stand in" },
      { type: "partial", text: "stand in utterance" },
      { type: "final", text: "stand in utterance 1" },
    ]);
    expect(second.at(-1)).toEqual({ type: "final", text: "stand in utterance 2" });
    expect(second.filter((result) => result.type === "final")).toHaveLength(1);
    const { streams } = standin.stats();
    expect(streams).toHaveLength(1);
    expect(streams[0]!.params).toMatchObject({
      encoding: "linear16",
      sample_rate: "16000",
      channels: "1",
      model: "nova-2",
      language: "en-US",
      interim_results: "true",
      endpointing: "false",
    });
    expect(streams[0]!.utterances).toBe(2);
  });

  it("sends every frame as PCM16 little-endian bytes at the call's rate", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url }, 8000);
    const sent = frames(40, 8000, 5);

    const results = await collect(session.transcribe(stream(sent), never));

    expect(results.at(-1)).toEqual({ type: "final", text: "stand in utterance 1" });
    const stats = standin.stats().streams[0]!;
    expect(stats.params.sample_rate).toBe("8000");
    const expected = littleEndianSha256(sent);
    expect(stats.audioBytes).toBe(expected.bytes);
    expect(stats.audioSha256).toBe(expected.sha256);
  });

  it("lets an utterance that starts before the last one's final wait for it, then get its own", async () => {
    const { url } = await startStandin({ finalDelayMs: 50 });
    const session = await openSession({ url });

    const [first, second] = await Promise.all([
      collect(session.transcribe(stream(frames(10, 16000)), never)),
      collect(session.transcribe(stream(frames(10, 16000, 7)), never)),
    ]);

    expect(first).toEqual([{ type: "final", text: "stand in utterance 1" }]);
    expect(second).toEqual([{ type: "final", text: "stand in utterance 2" }]);
  });

  it("asks again for a stream the service refused with 503, and gives up after the policy's retries", async () => {
    const retry = { delaysMs: [1, 1], maxRetryAfterMs: 0 };
    const blip = await startStandin({ unavailableFirst: 2 });
    const session = await openSession({ url: blip.url, retry });
    expect(blip.standin.stats().refused).toBe(2);
    const results = await collect(session.transcribe(stream(frames(5, 16000)), never));
    expect(results.at(-1)).toEqual({ type: "final", text: "stand in utterance 1" });

    const down = await startStandin({ unavailableFirst: 10 });
    const error = await new DeepgramProvider({ url: down.url, retry }).open({ language: "en-US", sampleRate: 16000, signal: never }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AsrError", code: "recognizer_unavailable", retryable: true });
    expect((error as Error).message).toMatch(/503/);
    expect(down.standin.stats().refused).toBe(3);
  });

  it("sends the key as `Authorization: Token` and fails to open without the right one", async () => {
    const { url, standin } = await startStandin({ apiKey: "right-key" });

    const wrong = await new DeepgramProvider({ url, apiKey: "wrong-key" })
      .open({ language: "en-US", sampleRate: 16000, signal: never })
      .catch((error: unknown) => error);
    const missing = await new DeepgramProvider({ url })
      .open({ language: "en-US", sampleRate: 16000, signal: never })
      .catch((error: unknown) => error);
    const session = await openSession({ url, apiKey: "right-key" });

    for (const error of [wrong, missing]) {
      expect(error).toMatchObject({ name: "AsrError", code: "recognizer_unavailable", retryable: false });
      expect((error as Error).message).toMatch(/401/);
    }
    expect((wrong as Error).message).not.toContain("wrong-key");
    expect(standin.stats().refused).toBe(2);
    const results = await collect(session.transcribe(stream(frames(5, 16000)), never));
    expect(results.at(-1)).toEqual({ type: "final", text: "stand in utterance 1" });
  });

  it("ends the iteration at once when the utterance is aborted, and recognizes the next one on a new stream", async () => {
    const { url, standin } = await startStandin({ interimEveryMs: 20 });
    const session = await openSession({ url });
    const audio = new AsyncQueue<AudioFrame>();
    for (const frame of frames(3, 16000)) audio.push(frame);
    const controller = new AbortController();

    // The audio never ends and no final is asked for: only the abort can end this iteration.
    const { first, rest } = await untilPartial(session.transcribe(audio, controller.signal));
    const reason = new Error("the call ended");
    controller.abort(reason);

    expect(first.type).toBe("partial");
    await expect(rest).rejects.toBe(reason);
    const next = await collect(session.transcribe(stream(frames(5, 16000)), never));
    expect(next.at(-1)).toEqual({ type: "final", text: "stand in utterance 1" });
    expect(standin.stats().streams.map((s) => s.utterances)).toEqual([0, 1]);
  });

  it("fails the utterance with recognizer_crashed when the server closes the stream mid-utterance", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url });
    const audio = new AsyncQueue<AudioFrame>();
    for (const frame of frames(5, 16000)) audio.push(frame);

    const results = collect(session.transcribe(audio, never));
    await vi.waitFor(() => expect(standin.stats().streams[0]!.audioBytes).toBeGreaterThan(0));
    standin.disconnectAll(1011, "NET-0001");

    await expect(results).rejects.toMatchObject({ name: "AsrError", code: "recognizer_crashed", retryable: true });
    await expect(results).rejects.toThrow(/NET-0001/);
    const next = await collect(session.transcribe(stream(frames(5, 16000)), never));
    expect(next.at(-1)).toEqual({ type: "final", text: "stand in utterance 1" });
  });

  it("fails with recognition_failed when the final never comes", async () => {
    const { url, standin } = await startStandin({ finalDelayMs: Number.POSITIVE_INFINITY });
    const session = await openSession({ url, finalTimeoutMs: 50 });

    await expect(collect(session.transcribe(stream(frames(5, 16000)), never))).rejects.toMatchObject({
      code: "recognition_failed",
      retryable: true,
    });
    expect(standin.stats().streams[0]!.finalizes).toBe(1);
  });

  it("refuses frames at another rate than the stream's with unsupported_audio", async () => {
    const { url } = await startStandin();
    const session = await openSession({ url }, 16000);

    await expect(collect(session.transcribe(stream(frames(5, 8000)), never))).rejects.toMatchObject({
      code: "unsupported_audio",
      retryable: false,
    });
  });

  it("keeps an idle stream open with KeepAlive", async () => {
    const { url, standin } = await startStandin();
    await openSession({ url, keepAliveMs: 10 });

    await vi.waitFor(() => expect(standin.stats().streams[0]!.keepAlives).toBeGreaterThan(0));
  });

  it("sends CloseStream and closes the socket on close(), once", async () => {
    const { url, standin } = await startStandin();
    const session = await openSession({ url });
    await collect(session.transcribe(stream(frames(5, 16000)), never));

    await session.close();
    await session.close();

    const stats = standin.stats().streams[0]!;
    expect(stats.closeStreams).toBe(1);
    expect(stats.open).toBe(false);
    await expect(collect(session.transcribe(stream(frames(1, 16000)), never))).rejects.toMatchObject({ code: "closed" });
  });
});

describe("DeepgramProvider against other servers", () => {
  it("keeps final results sent before Finalize for the utterance's final", async () => {
    const server = http.createServer();
    const sockets = new WebSocketServer({ server });
    const url = await listen(server);
    cleanups.push(() => sockets.close());
    const results = (transcript: string, isFinal: boolean, fromFinalize = false) =>
      JSON.stringify({ type: "Results", is_final: isFinal, from_finalize: fromFinalize, channel: { alternatives: [{ transcript }] } });
    sockets.on("connection", (socket) => {
      let audioMessages = 0;
      socket.on("message", (data, isBinary) => {
        if (isBinary && ++audioMessages === 1) {
          // The service's own segmentation: a final result before the client asks for one.
          socket.send(results("book a table", true));
          socket.send(results("for", false));
        } else if (!isBinary && (JSON.parse(data.toString()) as { type: string }).type === "Finalize") {
          socket.send(results("for two", true, true));
        }
      });
    });
    const session = await openSession({ url });

    const all = await collect(session.transcribe(stream(frames(5, 16000)), never));

    expect(all).toEqual([
      { type: "partial", text: "book a table" },
      { type: "partial", text: "book a table for" },
      { type: "final", text: "book a table for two" },
    ]);
  });

  it("fails to open with a retryable recognizer_unavailable when the handshake times out or is aborted", async () => {
    const server = http.createServer();
    const held: Duplex[] = [];
    server.on("upgrade", (_request, socket: Duplex) => held.push(socket)); // never answers
    const url = await listen(server);
    cleanups.push(() => held.forEach((socket) => socket.destroy()));
    const provider = new DeepgramProvider({ url, connectTimeoutMs: 50 });
    const controller = new AbortController();

    const timingOut = provider.open({ language: "en-US", sampleRate: 16000, signal: never }).catch((error: unknown) => error);
    const aborting = new DeepgramProvider({ url })
      .open({ language: "en-US", sampleRate: 16000, signal: controller.signal })
      .catch((error: unknown) => error);
    controller.abort();
    const [timedOut, aborted] = await Promise.all([timingOut, aborting]);

    expect(timedOut).toMatchObject({ name: "AsrError", code: "recognizer_unavailable", retryable: true });
    expect((timedOut as Error).message).toMatch(/did not open/);
    expect(aborted).toMatchObject({ name: "AsrError", code: "recognizer_unavailable", retryable: true });
    expect((aborted as Error).message).toMatch(/aborted/);
  });
});
