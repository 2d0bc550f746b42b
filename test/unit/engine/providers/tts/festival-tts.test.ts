import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";
import { festivalDefinition } from "../../../../../engine/providers/tts/festival/index.js";
import { FestivalTts } from "../../../../../engine/providers/tts/festival/festival-tts.js";
import type { SpeechChunk } from "../../../../../engine/providers/tts/tts-provider.js";

// Real festival processes (Debian festival, festvox-us-slt-hts, festvox-kallpc16k; setup.sh installs them).
const SHORT = "Thank you for calling, how can I help you today?";
const LONG = Array.from({ length: 6 }, () => "Your appointment for a haircut is booked for next Tuesday at half past ten in the morning.").join(" ");

let tts: FestivalTts;

beforeAll(async () => {
  tts = new FestivalTts();
  await Promise.all([tts.warmUp("festival-slt-hts"), tts.warmUp("festival-kal")]);
}, 60_000);

afterAll(async () => {
  await tts?.close();
});

async function* from(pieces: string[]): AsyncIterable<string> {
  yield* pieces;
}

async function collect(chunks: AsyncIterable<SpeechChunk>): Promise<SpeechChunk[]> {
  const out: SpeechChunk[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

function speak(pieces: string[], voiceId = "festival-slt-hts", signal = new AbortController().signal): Promise<SpeechChunk[]> {
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

describe("FestivalTts", () => {
  it("is defined as the embedded tts provider festival, one process per voice by default", () => {
    expect(festivalDefinition).toMatchObject({ name: "festival", stage: "tts", remote: false });
    expect(festivalDefinition.settings.parse({})).toEqual({ festivalProcesses: 1 });
  });

  it("lists its two voices as VoiceInfo", () => {
    expect(tts.voices()).toEqual([
      { id: "festival-slt-hts", provider: "festival", name: "slt (HTS)", language: "en-US", gender: "female", sample_rate: 32000 },
      { id: "festival-kal", provider: "festival", name: "kal (diphone)", language: "en-US", gender: "male", sample_rate: 16000 },
    ]);
  });

  it.each(["festival-slt-hts", "festival-kal"])("%s speaks a short sentence at the rate it lists (its RIFF header's)", async (voiceId) => {
    const rate = tts.voices().find((v) => v.id === voiceId)!.sample_rate;
    const chunks = await speak([SHORT], voiceId);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.sampleRate).toBe(rate);
      expect(chunk.piece).toBe(0);
    }
    for (const chunk of chunks.slice(0, -1)) expect(chunk.samples.length).toBe(rate / 10);
    expect(seconds(chunks)).toBeGreaterThan(0.5);
    expect(seconds(chunks)).toBeLessThan(5);
    expect(rms(join(chunks))).toBeGreaterThan(300);
  });

  it("yields two pieces in order, piece 0 then piece 1, each as it says alone", async () => {
    const pieces = ["Hello.", "This second sentence is quite a lot longer than the first one."];
    const alone = await Promise.all(pieces.map(async (p) => join(await speak([p]))));
    const chunks = await speak(pieces);
    const first = chunks.filter((c) => c.piece === 0);
    const second = chunks.filter((c) => c.piece === 1);
    expect(first.length + second.length).toBe(chunks.length);
    expect(chunks.findIndex((c) => c.piece === 1)).toBe(first.length);
    expect(join(first)).toEqual(alone[0]);
    expect(join(second)).toEqual(alone[1]);
    expect(second.length).toBeGreaterThan(first.length);
  });

  it("speaks Scheme in the text and never runs it", async () => {
    const marker = path.join(os.tmpdir(), `parley-festival-${process.pid}`);
    rmSync(marker, { force: true });
    const attacks = [`Say ") (system "touch ${marker}") (print "`, `a \\" (system "touch ${marker}") \\`, `back\\slash") (system "touch ${marker}")`];
    for (const attack of attacks) {
      const chunks = await speak([attack]);
      expect(seconds(chunks)).toBeGreaterThan(1);
      expect(rms(join(chunks))).toBeGreaterThan(300);
    }
    expect(existsSync(marker)).toBe(false);
    // The process is still in its right mind: the same sentence as before.
    expect(join(await speak([SHORT]))).toEqual(join(await speak([SHORT])));
  });

  it("stops at once when aborted mid-stream, and the next synthesis gets its own audio", async () => {
    const expected = join(await speak([SHORT]));
    const controller = new AbortController();
    const frames: SpeechChunk[] = [];
    for await (const chunk of tts.synthesize(from([SHORT, LONG, SHORT]), { voiceId: "festival-slt-hts", signal: controller.signal })) {
      frames.push(chunk);
      if (frames.length === 2) controller.abort();
    }
    expect(frames).toHaveLength(2);
    // LONG was being synthesized when the abort came: its leftover output must not be taken for this one's.
    expect(join(await speak([SHORT]))).toEqual(expected);
  });

  it("yields nothing when already aborted, and refuses an unknown voice", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await speak([SHORT], "festival-slt-hts", controller.signal)).toEqual([]);
    await expect(speak([SHORT], "festival-nobody")).rejects.toThrow('unknown Festival voice "festival-nobody"');
  });

  it("fails the sentence under way with a ProviderError when its process is killed, and the next synthesis works", async () => {
    const [kal] = tts.pids("festival-kal");
    expect(kal).toBeDefined();
    const failing = speak([LONG], "festival-kal");
    // Once the pool has given LONG to the kal process, kill it mid-sentence.
    await vi.waitFor(() => expect(tts.stats().busy).toBe(1), { timeout: 5000, interval: 5 });
    process.kill(kal!, "SIGKILL");
    const error = await failing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ stage: "tts", provider: "festival", retryable: true });
    expect(tts.pids("festival-kal")).toEqual([]);
    const chunks = await speak([SHORT], "festival-kal");
    expect(seconds(chunks)).toBeGreaterThan(0.5);
    expect(rms(join(chunks))).toBeGreaterThan(300);
    expect(tts.pids("festival-kal")).toHaveLength(1);
    expect(tts.pids("festival-kal")).not.toContain(kal);
  });
});

describe("FestivalTts without festival", () => {
  it("fails with a ProviderError naming what to install", async () => {
    const missing = new FestivalTts({ command: "/nonexistent/festival" });
    const error = await collect(missing.synthesize(from([SHORT]), { voiceId: "festival-kal", signal: new AbortController().signal })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toMatch(/festival is not installed/);
    await missing.close();
  });
});

describe("FestivalTts with a festival that never answers", () => {
  // Loads its "voice" (answers the ready line) and then reads sentences without ever saying one.
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-festival-"));
  const hung = path.join(dir, "festival");
  writeFileSync(hung, `#!/bin/sh\nwhile read -r line; do\n  case "$line" in *PARLEY-READY*) printf '\\nPARLEY-READY cmu_us_slt_arctic_hts\\n';; esac\ndone\n`, { mode: 0o755 });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("fails the sentence after the answer timeout, stops the process, and gives the next sentence a new one", async () => {
    const silent = new FestivalTts({ command: hung, answerTimeoutMs: 300 });
    try {
      await silent.warmUp("festival-slt-hts");
      expect(silent.pids("festival-slt-hts")).toHaveLength(1);
      const error = await speakWith(silent, [SHORT]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ stage: "tts", provider: "festival", retryable: true });
      expect((error as Error).message).toMatch(/did not answer a sentence within 0.3 s; the process was stopped/);
      expect(silent.pids("festival-slt-hts")).toEqual([]);
      // Nothing is left holding the pool's only slot: the next sentence gets a process of its own (and fails the same way).
      await expect(speakWith(silent, [SHORT])).rejects.toThrow(/did not answer/);
      expect(silent.stats()).toMatchObject({ busy: 0, queued: 0 });
    } finally {
      await silent.close();
    }
  });

  it("frees the process of a sentence its caller gave up on once the timeout stops it", async () => {
    const silent = new FestivalTts({ command: hung, answerTimeoutMs: 300 });
    try {
      const controller = new AbortController();
      const given = speakWith(silent, [SHORT], controller.signal);
      await vi.waitFor(() => expect(silent.stats().busy).toBe(1), { timeout: 5000, interval: 5 });
      controller.abort();
      expect(await given).toEqual([]);
      // The caller is gone at once; the hung process holds its slot until the timeout stops it.
      expect(silent.stats().busy).toBe(1);
      await vi.waitFor(() => expect(silent.stats()).toMatchObject({ processes: 0, busy: 0 }), { timeout: 5000, interval: 20 });
    } finally {
      await silent.close();
    }
  });
});

function speakWith(provider: FestivalTts, pieces: string[], signal = new AbortController().signal): Promise<SpeechChunk[]> {
  return collect(provider.synthesize(from(pieces), { voiceId: "festival-slt-hts", signal }));
}
