import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../../engine/audio/wav.js";
import { humanClips } from "../../../scripts/eval/human-clips.js";
import { babbleTalkers, maskedPower, speechActivity, withNoise } from "../../../scripts/eval/noise.js";
import { EVAL_VOICES, renderSpeech, speechCachePath, type EvalVoice } from "../../../scripts/eval/speech-sources.js";

// The sources of the hearing evaluation's speech (scripts/eval): synthetic voices through
// Festival and eSpeak NG, noise at a measured SNR, and the human clips of pocketsphinx-testdata.

const cacheDir = mkdtempSync(path.join(os.tmpdir(), "parley-speech-sources-"));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

const SENTENCE = "i would like to book a cleaning";

/** Speech power over noise power, both over the speech's non-silent part, in dB. */
function measuredSnrDb(speech: Int16Array, noisy: Int16Array): number {
  const mask = speechActivity(speech);
  const noise = Float64Array.from(noisy, (s, i) => s - speech[i]!);
  return 10 * Math.log10(maskedPower(speech, mask) / maskedPower(noise, mask));
}

/** Mean absolute difference over the common length, relative to the first's mean absolute level. */
function relativeDifference(a: Int16Array, b: Int16Array): number {
  const n = Math.min(a.length, b.length);
  let diff = 0;
  let level = 0;
  for (let i = 0; i < n; i++) {
    diff += Math.abs(a[i]! - b[i]!);
    level += Math.abs(a[i]!);
  }
  return diff / level;
}

function peak(samples: Int16Array): number {
  let max = 0;
  for (const s of samples) max = Math.max(max, Math.abs(s));
  return max;
}

describe("synthetic evaluation voices", () => {
  it("each voice speaks a sentence as 16 kHz audio of a plausible length, and no two sound alike", async () => {
    const rendered = new Map<string, Int16Array>();
    for (const voice of EVAL_VOICES) {
      const speech = await renderSpeech(SENTENCE, voice.id, cacheDir);
      expect(speech.sampleRate).toBe(16000);
      // Measured: 0.056-0.072 s per character across the five voices; the bounds are generous.
      const secondsPerChar = speech.samples.length / 16000 / SENTENCE.length;
      expect(secondsPerChar, voice.id).toBeGreaterThan(0.03);
      expect(secondsPerChar, voice.id).toBeLessThan(0.12);
      expect(peak(speech.samples), voice.id).toBeGreaterThan(1000);
      rendered.set(voice.id, speech.samples);
    }
    const ids = [...rendered.keys()];
    for (const [i, a] of ids.entries()) {
      for (const b of ids.slice(i + 1)) expect(relativeDifference(rendered.get(a)!, rendered.get(b)!), `${a} vs ${b}`).toBeGreaterThan(0.5);
    }
  });

  it("a second render of the same (voice, text) is read from the cache, not rendered", async () => {
    const first = await renderSpeech("see you on tuesday", "espeak-en-gb", cacheDir);
    const cached = speechCachePath("see you on tuesday", "espeak-en-gb", cacheDir);
    expect(readdirSync(cacheDir)).toContain(path.basename(cached));
    // Replace the cached audio with a marker: a second call that returns the marker read the
    // cache; one that rendered would return speech again.
    const marker = Int16Array.from({ length: 1600 }, (_, i) => (i % 2 ? 1234 : -1234));
    writeFileSync(cached, encodeWav({ samples: marker, sampleRate: 16000, channels: 1 }));
    const second = await renderSpeech("see you on tuesday", "espeak-en-gb", cacheDir);
    expect(Array.from(second.samples)).toEqual(Array.from(marker));
    expect(first.samples.length).not.toBe(marker.length);
    // Another voice or another text is another entry.
    expect(speechCachePath("see you on tuesday", "espeak-en-us", cacheDir)).not.toBe(cached);
    expect(speechCachePath("see you on monday", "espeak-en-gb", cacheDir)).not.toBe(cached);
  });

  it("a voice that is not installed fails loudly, naming the voice and the command", async () => {
    const festival: EvalVoice = { id: "festival-missing", engine: "festival", voice: "no_such_voice_diphone", package: "festvox-none" };
    await expect(renderSpeech("hello", festival, cacheDir)).rejects.toThrow(/festival-missing.*text2wave/s);
    const variant: EvalVoice = { id: "espeak-missing-variant", engine: "espeak-ng", voice: "en-us+nosuchvariant", package: "espeak-ng" };
    await expect(renderSpeech("hello", variant, cacheDir)).rejects.toThrow(/espeak-missing-variant.*nosuchvariant/);
    const language: EvalVoice = { id: "espeak-missing-language", engine: "espeak-ng", voice: "xx-nowhere", package: "espeak-ng" };
    await expect(renderSpeech("hello", language, cacheDir)).rejects.toThrow(/espeak-missing-language.*espeak-ng -v xx-nowhere/);
  });
});

describe("noise at a signal-to-noise ratio", () => {
  it("hits the requested SNR within 0.5 dB for white, street and babble noise, the same for a seed", async () => {
    const speech = (await renderSpeech(SENTENCE, "festival-kal", cacheDir)).samples;
    const talkers = await babbleTalkers(["espeak-en-us", "espeak-en-gb"], cacheDir);
    for (const kind of ["white", "street", "babble"] as const) {
      for (const snr of [20, 10, 5, 0]) {
        const noisy = withNoise(speech, snr, { kind, seed: 7, talkers });
        expect(noisy.length).toBe(speech.length);
        expect(Math.abs(measuredSnrDb(speech, noisy) - snr), `${kind} at ${snr} dB`).toBeLessThan(0.5);
      }
      const again = withNoise(speech, 10, { kind, seed: 7, talkers });
      const otherSeed = withNoise(speech, 10, { kind, seed: 8, talkers });
      expect(Array.from(again), kind).toEqual(Array.from(withNoise(speech, 10, { kind, seed: 7, talkers })));
      expect(Array.from(otherSeed), kind).not.toEqual(Array.from(again));
    }
  });

  it("clips to the int16 range, and babble without talkers is refused", () => {
    const loud = Int16Array.from({ length: 16000 }, (_, i) => Math.round(30000 * Math.sin(i / 5)));
    const noisy = withNoise(loud, -10, { kind: "white", seed: 1 });
    expect(Math.max(...noisy)).toBe(32767);
    expect(Math.min(...noisy)).toBe(-32768);
    expect(() => withNoise(loud, 10, { kind: "babble", seed: 1 })).toThrow(/talkers/);
  });
});

describe("human clips (pocketsphinx-testdata)", () => {
  it("offers the package's transcribed recordings, each with words and 16 kHz audio", () => {
    const clips = humanClips();
    expect(clips.map((c) => c.id)).toEqual(expect.arrayContaining(["cards/001", "goforward", "tidigits/dhd.2934z"]));
    expect(clips.length).toBeGreaterThanOrEqual(12);
    expect(new Set(clips.map((c) => c.id)).size).toBe(clips.length);
    for (const clip of clips) {
      expect(clip.transcript, clip.id).toMatch(/^[a-z' ]+$/);
      expect(clip.transcript).not.toMatch(/<\/?s>|\(/);
      // At least half a second of sound, and speech-like levels (a byte-swapped reading of a
      // little-endian file would be loud noise near full scale).
      expect(clip.samples.length, clip.id).toBeGreaterThan(8000);
      const rms = Math.sqrt(maskedPower(clip.samples, new Uint8Array(clip.samples.length).fill(1)));
      expect(rms, clip.id).toBeGreaterThan(50);
      expect(rms, clip.id).toBeLessThan(10000);
    }
    expect(clips.find((c) => c.id === "cards/001")!.transcript).toBe("ten of clubs");
  });
});
