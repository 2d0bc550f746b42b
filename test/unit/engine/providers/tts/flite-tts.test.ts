import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { FLITE_VOICES } from "../../../../../engine/providers/tts/flite/flite-voices.js";
import { FliteTts } from "../../../../../engine/providers/tts/flite/flite-tts.js";

const SHORT = "Thank you for calling, how can I help you today?";

let tts: FliteTts;

beforeAll(async () => {
  tts = new FliteTts();
  await tts.start();
}, 60_000);

afterAll(async () => {
  await tts?.close();
});

async function* from(pieces: string[]): AsyncIterable<string> {
  yield* pieces;
}

/** A text source the test feeds piece by piece. */
function feed() {
  const pieces: string[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(piece: string) {
      pieces.push(piece);
      poke();
    },
    end() {
      ended = true;
      poke();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (pieces.length > 0) yield pieces.shift()!;
        else if (ended) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

async function collect(frames: AsyncIterable<AudioFrame>): Promise<AudioFrame[]> {
  const out: AudioFrame[] = [];
  for await (const frame of frames) out.push(frame);
  return out;
}

function speak(pieces: string[], voiceId = "flite-slt", signal = new AbortController().signal): Promise<AudioFrame[]> {
  return collect(tts.synthesize(from(pieces), { voiceId, signal }));
}

function join(frames: AudioFrame[]): Int16Array {
  const out = new Int16Array(frames.reduce((n, f) => n + f.samples.length, 0));
  let at = 0;
  for (const frame of frames) {
    out.set(frame.samples, at);
    at += frame.samples.length;
  }
  return out;
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

const seconds = (frames: AudioFrame[]) => frames.reduce((s, f) => s + f.samples.length / f.sampleRate, 0);

describe("FliteTts", () => {
  it("lists the Flite voices", () => {
    expect(tts.voices()).toBe(FLITE_VOICES);
  });

  it.each(FLITE_VOICES.map((v) => [v.id, v.sample_rate] as const))("%s speaks a short sentence at %i Hz", async (voiceId, rate) => {
    const frames = await speak([SHORT], voiceId);
    expect(frames.length).toBeGreaterThan(1);
    for (const frame of frames) expect(frame.sampleRate).toBe(rate);
    // Chunks of 100 ms, the last one shorter.
    for (const frame of frames.slice(0, -1)) expect(frame.samples.length).toBe(rate / 10);
    expect(seconds(frames)).toBeGreaterThan(1);
    expect(seconds(frames)).toBeLessThan(5);
    expect(rms(join(frames))).toBeGreaterThan(500);
  });

  it("starts with speech, not with Flite's opening silence", async () => {
    const [first] = await speak(["Hello there."], "flite-rms");
    expect(rms(first!.samples)).toBeGreaterThan(300);
  });

  it("yields each sentence's audio in order, equal to the sentence spoken alone", async () => {
    const sentences = ["Hello.", "This second sentence is quite a lot longer than the first one.", "Goodbye now."];
    const alone = await Promise.all(sentences.map(async (s) => join(await speak([s]))));
    expect(new Set(alone.map((a) => a.length)).size).toBe(3);
    const together = join(await speak(sentences));
    expect(together).toEqual(join(alone.map((samples) => ({ samples, sampleRate: 16000 }))));
  });

  it("yields a sentence's audio before the next sentence arrives", async () => {
    const text = feed();
    const iterator = tts.synthesize(text, { voiceId: "flite-rms", signal: new AbortController().signal })[Symbol.asyncIterator]();
    text.push("First sentence.");
    const first = await iterator.next();
    expect(first.done).toBe(false);
    text.push("Second one.");
    text.end();
    const rest: AudioFrame[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
    const expected = join(await speak(["First sentence.", "Second one."], "flite-rms"));
    expect(join([first.value as AudioFrame, ...rest])).toEqual(expected);
  });

  it("reads markdown and emoji as Flite-clean text and skips pieces with nothing to say", async () => {
    const clean = join(await speak(["I like cats."]));
    expect(join(await speak(["😀", "I like **cats** 👍.", "  "]))).toEqual(clean);
  });

  it("gives two concurrent calls each their own audio", async () => {
    const short = ["Yes."];
    const long = ["Your appointment is on Tuesday at ten thirty in the morning.", "See you then."];
    const [a, b] = await Promise.all([speak(short, "flite-slt"), speak(long, "flite-rms")]);
    expect(join(a)).toEqual(join(await speak(short, "flite-slt")));
    expect(join(b)).toEqual(join(await speak(long, "flite-rms")));
    expect(seconds(b)).toBeGreaterThan(seconds(a));
  });

  it("stops at once when aborted mid-stream", async () => {
    const controller = new AbortController();
    const sentences = ["One sentence here.", "Another sentence follows.", "And a third one."];
    const full = seconds(await speak(sentences));
    const frames: AudioFrame[] = [];
    for await (const frame of tts.synthesize(from(sentences), { voiceId: "flite-slt", signal: controller.signal })) {
      frames.push(frame);
      if (frames.length === 2) controller.abort();
    }
    expect(frames).toHaveLength(2);
    expect(seconds(frames)).toBeLessThan(full);
  });

  it("ends when aborted while waiting for text", async () => {
    const controller = new AbortController();
    const text = feed();
    const iterator = tts.synthesize(text, { voiceId: "flite-slt", signal: controller.signal })[Symbol.asyncIterator]();
    const waiting = iterator.next();
    controller.abort();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  it("yields nothing when already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await speak([SHORT], "flite-slt", controller.signal)).toEqual([]);
  });

  it("refuses an unknown voice", async () => {
    await expect(speak([SHORT], "flite-nobody")).rejects.toThrow('unknown Flite voice "flite-nobody"');
    await expect(speak([SHORT], "rms")).rejects.toThrow(/flite-rms/);
  });
});

describe("FliteTts lifecycle", () => {
  it("refuses to synthesize before start and after close", async () => {
    const idle = new FliteTts({ workers: 1 });
    const attempt = () => collect(idle.synthesize(from([SHORT]), { voiceId: "flite-slt", signal: new AbortController().signal }));
    await expect(attempt()).rejects.toThrow("not running");
    await idle.start();
    expect(seconds(await attempt())).toBeGreaterThan(1);
    await idle.close();
    await expect(attempt()).rejects.toThrow("not running");
  }, 60_000);

  it("refuses a pool without workers", () => {
    expect(() => new FliteTts({ workers: 0 })).toThrow("at least 1");
  });
});
