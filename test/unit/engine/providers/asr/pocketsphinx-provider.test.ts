import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AsrResult, AsrSession } from "../../../../../engine/providers/asr/asr-provider.js";
import { AsrError } from "../../../../../engine/providers/asr/asr-error.js";
import { PocketsphinxProvider } from "../../../../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { speak, type Speech } from "../../../../helpers/flite-speech.js";
import { ensureRecognizerBuilt, recognizerPids } from "./built-recognizer.js";
import { speechFrames } from "./speech-frames.js";

const never = new AbortController().signal;
const speech = new Map<string, Speech>();

beforeAll(async () => {
  ensureRecognizerBuilt();
  for (const text of ["i would like to book an appointment", "can i speak to a human please", "my name is john smith"]) {
    speech.set(text, await speak(text, "rms"));
  }
}, 120_000);

function audio(text: string): Speech {
  return speech.get(text)!;
}

async function collect(results: AsyncIterable<AsrResult>): Promise<AsrResult[]> {
  const all: AsrResult[] = [];
  for await (const result of results) all.push(result);
  return all;
}

async function finalText(session: AsrSession, text: string): Promise<string> {
  const { samples, sampleRate } = audio(text);
  const results = await collect(session.transcribe(speechFrames(samples, sampleRate), never));
  return results.at(-1)!.text;
}

describe("PocketsphinxProvider", () => {
  let provider: PocketsphinxProvider;
  beforeAll(() => {
    provider = new PocketsphinxProvider({ maxRecognizers: 2 });
  });
  afterAll(() => provider.close());

  it("yields partials while the audio is still arriving, then one final", async () => {
    const session = await provider.open({ language: "en-US", signal: never });
    try {
      const { samples, sampleRate } = audio("i would like to book an appointment");
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // The stream stalls before its last half second until a partial has come back: a
      // recognizer that waited for the end of the audio would never answer.
      const frames = speechFrames(samples, sampleRate, { stopAfter: Math.floor(samples.length / 320) - 25, release: released });
      const results: AsrResult[] = [];
      for await (const result of session.transcribe(frames, never)) {
        results.push(result);
        if (result.type === "partial") release();
      }
      expect(results.filter((result) => result.type === "partial").length).toBeGreaterThan(0);
      expect(results.filter((result) => result.type === "final")).toHaveLength(1);
      expect(results.at(-1)?.text).toMatch(/i would like/);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("runs two calls in parallel, each with its own recognizer and its own text, and holds none between utterances", async () => {
    const [first, second] = await Promise.all([
      provider.open({ language: "en-US", signal: never }),
      provider.open({ language: "en-US", signal: never }),
    ]);
    try {
      // Open calls whose callers are silent hold no recognizer.
      expect(provider.stats()).toMatchObject({ max: 2, leased: 0 });
      const both = Promise.all([finalText(first, "can i speak to a human please"), finalText(second, "my name is john smith")]);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(provider.stats()).toMatchObject({ max: 2, leased: 2 });
      const [a, b] = await both;
      expect(provider.stats()).toMatchObject({ leased: 0, idle: 2 });
      expect(a).toBe("can i speak to a human please");
      expect(b).toBe("my name is john smith");
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    expect(provider.stats()).toMatchObject({ leased: 0, idle: 2 });
  }, 60_000);

  it("stops an utterance when its signal aborts, and the session goes on with the next one", async () => {
    const session = await provider.open({ language: "en-US", signal: never });
    try {
      const { samples, sampleRate } = audio("i would like to book an appointment");
      const controller = new AbortController();
      // A caller still on the line: the audio stops coming but never ends.
      const frames = speechFrames(samples, sampleRate, { stopAfter: 60, release: new Promise(() => {}) });
      const results: AsrResult[] = [];
      const run = (async () => {
        for await (const result of session.transcribe(frames, controller.signal)) {
          results.push(result);
          if (result.type === "partial") controller.abort();
        }
      })();
      await expect(run).rejects.toMatchObject({ name: "AbortError" });
      expect(results.every((result) => result.type === "partial")).toBe(true);

      // The aborted utterance's late replies must not leak into the next one.
      expect(await finalText(session, "my name is john smith")).toBe("my name is john smith");
    } finally {
      await session.close();
    }
  }, 60_000);

  it("cancels the utterance when the consumer stops reading early", async () => {
    const session = await provider.open({ language: "en-US", signal: never });
    try {
      const { samples, sampleRate } = audio("i would like to book an appointment");
      for await (const result of session.transcribe(speechFrames(samples, sampleRate), never)) {
        if (result.type === "partial") break;
      }
      expect(await finalText(session, "can i speak to a human please")).toBe("can i speak to a human please");
    } finally {
      await session.close();
    }
  }, 60_000);

  it("takes the next utterance while the last one still waits for its final", async () => {
    const session = await provider.open({ language: "en-US", signal: never });
    try {
      const first = audio("can i speak to a human please");
      const second = audio("my name is john smith");
      // Both started at once: the second's audio must queue behind the first's, not mix with it.
      const [a, b] = await Promise.all([
        collect(session.transcribe(speechFrames(first.samples, first.sampleRate), never)),
        collect(session.transcribe(speechFrames(second.samples, second.sampleRate), never)),
      ]);
      expect(a.at(-1)).toEqual({ type: "final", text: "can i speak to a human please" });
      expect(b.at(-1)).toEqual({ type: "final", text: "my name is john smith" });
    } finally {
      await session.close();
    }
  }, 60_000);

  it("rejects the utterance under way when the session closes, and hands the recognizer on clean", async () => {
    const session = await provider.open({ language: "en-US", signal: never });
    const { samples, sampleRate } = audio("i would like to book an appointment");
    const frames = speechFrames(samples, sampleRate, { stopAfter: 60, release: new Promise(() => {}) });
    const run = (async () => {
      for await (const result of session.transcribe(frames, never)) {
        if (result.type === "partial") void session.close();
      }
    })();
    await expect(run).rejects.toMatchObject({ code: "closed" });
    expect(provider.stats()).toMatchObject({ leased: 0 });

    const next = await provider.open({ language: "en-US", signal: never });
    try {
      expect(await finalText(next, "my name is john smith")).toBe("my name is john smith");
    } finally {
      await next.close();
    }
  }, 60_000);

  it("refuses languages the model does not read", async () => {
    await expect(provider.open({ language: "fr-FR", signal: never })).rejects.toMatchObject({ code: "unsupported_language" });
  });

  it("refuses audio at a rate it does not take, and the session stays usable", async () => {
    const session = await provider.open({ language: "en-US", signal: never });
    try {
      const frames = speechFrames(new Int16Array(48000), 48000);
      await expect(collect(session.transcribe(frames, never))).rejects.toMatchObject({ code: "unsupported_audio" });
      expect(await finalText(session, "my name is john smith")).toBe("my name is john smith");
    } finally {
      await session.close();
    }
  }, 60_000);
});

describe("PocketsphinxProvider recovery", () => {
  it("rejects an utterance whose recognizer is killed, and carries on with a new recognizer", async () => {
    const provider = new PocketsphinxProvider({ maxRecognizers: 1 });
    try {
      const session = await provider.open({ language: "en-US", signal: never });
      const [victim] = recognizerPids();
      const { samples, sampleRate } = audio("i would like to book an appointment");
      const frames = speechFrames(samples, sampleRate, { stopAfter: 60, release: new Promise(() => {}) });
      const run = (async () => {
        for await (const result of session.transcribe(frames, never)) {
          if (result.type === "partial") process.kill(victim!, "SIGKILL");
        }
      })();
      const error = await run.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(AsrError);
      expect(error).toMatchObject({ code: "recognizer_crashed", retryable: true });
      expect((error as Error).message).toMatch(/killed by SIGKILL/);

      expect(await finalText(session, "my name is john smith")).toBe("my name is john smith");
      const now = recognizerPids();
      expect(now).toHaveLength(1);
      expect(now).not.toContain(victim);
      // Given back after its final: the call holds no recognizer while its caller is silent.
      expect(provider.stats()).toEqual({ max: 1, leased: 0, idle: 1, starting: 0, waiting: 0 });
      await session.close();
    } finally {
      await provider.close();
    }
  }, 60_000);

  it("frees the slot of a recognizer that dies between calls", async () => {
    const provider = new PocketsphinxProvider({ maxRecognizers: 1 });
    try {
      await provider.warmUp(1);
      const [victim] = recognizerPids();
      process.kill(victim!, "SIGKILL");
      await new Promise<void>((resolve) => {
        const poll = () => (provider.stats().idle > 0 ? setImmediate(poll) : resolve());
        poll();
      });
      expect(provider.stats()).toEqual({ max: 1, leased: 0, idle: 0, starting: 0, waiting: 0 });
      const session = await provider.open({ language: "en-US", signal: never });
      expect(await finalText(session, "can i speak to a human please")).toBe("can i speak to a human please");
      await session.close();
    } finally {
      await provider.close();
    }
  }, 60_000);
});

/** Resolves once the provider's pool stats satisfy `reached` (checked every turn of the event loop). */
function statsReach(provider: PocketsphinxProvider, reached: (stats: ReturnType<PocketsphinxProvider["stats"]>) => boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    const poll = () => (reached(provider.stats()) ? resolve() : setImmediate(poll));
    poll();
  });
}

/**
 * Two calls on `provider`; the first one's caller is speaking (its stream stalls until
 * `release`), holding a recognizer, once this resolves.
 */
async function firstCallerSpeaking(provider: PocketsphinxProvider) {
  const [first, second] = await Promise.all([provider.open({ language: "en-US", signal: never }), provider.open({ language: "en-US", signal: never })]);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const { samples, sampleRate } = audio("i would like to book an appointment");
  const firstUtterance = collect(first.transcribe(speechFrames(samples, sampleRate, { stopAfter: 60, release: held }), never));
  await statsReach(provider, (stats) => stats.leased === 1);
  return { first, second, release, firstUtterance };
}

describe("PocketsphinxProvider capacity", () => {
  it("serves two calls with one recognizer: the second caller's speech waits for the first's final, then is read", async () => {
    const provider = new PocketsphinxProvider({ maxRecognizers: 1 });
    try {
      const { first, second, release, firstUtterance } = await firstCallerSpeaking(provider);
      const secondText = finalText(second, "my name is john smith");
      await statsReach(provider, (stats) => stats.waiting === 1);
      release();
      expect((await firstUtterance).at(-1)?.text).toMatch(/i would like/);
      expect(await secondText).toBe("my name is john smith");
      expect(recognizerPids()).toHaveLength(1);
      expect(provider.stats()).toEqual({ max: 1, leased: 0, idle: 1, starting: 0, waiting: 0 });
      await Promise.all([first.close(), second.close()]);
    } finally {
      await provider.close();
    }
  }, 60_000);

  it("fails speech that waits longer than maxWaitMs for a busy pool with capacity_exhausted (retryable); the call goes on", async () => {
    const provider = new PocketsphinxProvider({ maxRecognizers: 1, maxWaitMs: 200 });
    try {
      const { first, second, release, firstUtterance } = await firstCallerSpeaking(provider);
      const error = await finalText(second, "my name is john smith").catch((reason: unknown) => reason);
      expect(error).toMatchObject({ code: "capacity_exhausted", retryable: true });
      expect((error as Error).message).toMatch(/all 1 pocketsphinx recognizers stayed busy for 200 ms/);
      expect(provider.stats()).toMatchObject({ waiting: 0 });
      release();
      await firstUtterance;
      // The refused call's next utterance gets the recognizer.
      expect(await finalText(second, "can i speak to a human please")).toBe("can i speak to a human please");
      await Promise.all([first.close(), second.close()]);
    } finally {
      await provider.close();
    }
  }, 60_000);

  it("rejects open() with the signal's reason when aborted while the model loads; the next call gets that recognizer", async () => {
    const provider = new PocketsphinxProvider({ maxRecognizers: 1 });
    try {
      const controller = new AbortController();
      const opening = provider.open({ language: "en-US", signal: controller.signal });
      controller.abort();
      await expect(opening).rejects.toMatchObject({ name: "AbortError" });
      expect(provider.stats()).toMatchObject({ leased: 0, starting: 1 });
      const session = await provider.open({ language: "en-US", signal: never });
      expect(recognizerPids()).toHaveLength(1);
      expect(await finalText(session, "can i speak to a human please")).toBe("can i speak to a human please");
      await session.close();
    } finally {
      await provider.close();
    }
  }, 60_000);

  it("loads recognizers ahead of calls with warmUp", async () => {
    const provider = new PocketsphinxProvider({ maxRecognizers: 2 });
    try {
      await provider.warmUp(5);
      expect(provider.stats()).toEqual({ max: 2, leased: 0, idle: 2, starting: 0, waiting: 0 });
    } finally {
      await provider.close();
    }
    expect(provider.stats()).toMatchObject({ idle: 0 });
  }, 60_000);

  it("explains how to build the recognizer when the binary is missing", async () => {
    const provider = new PocketsphinxProvider({ binaryPath: "/nonexistent/pocketsphinx-recognizer" });
    await expect(provider.open({ language: "en-US", signal: never })).rejects.toMatchObject({
      code: "recognizer_unavailable",
      message: expect.stringMatching(/scripts\/build-native\.sh/),
    });
    expect(provider.stats()).toMatchObject({ leased: 0, starting: 0 });
  });
});
