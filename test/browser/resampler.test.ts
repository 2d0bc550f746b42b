import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The console's streaming resampler (console/audio/resampler.js), which the capture and
 * playback worklets run in the browser: plain JavaScript, so it is checked here in Node.
 */

const { Resampler } = await import(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../console/audio/resampler.js"));

function tone(rate: number, hz: number, seconds: number): Float32Array {
  return Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / rate));
}

/** Resamples in 128-sample blocks, as an AudioWorklet receives them; returns the output after the filter's start-up. */
function resample(input: Float32Array, from: number, to: number): Float32Array {
  const resampler = new Resampler(from, to);
  const out: number[] = [];
  for (let i = 0; i < input.length; i += 128) out.push(...resampler.process(input.subarray(i, i + 128)));
  return Float32Array.from(out);
}

const rmsOf = (x: Float32Array) => Math.sqrt(x.reduce((sum, v) => sum + v * v, 0) / x.length);
/** Frequency from zero crossings. */
const frequencyOf = (x: Float32Array, rate: number) => {
  let crossings = 0;
  for (let i = 1; i < x.length; i++) if (x[i - 1]! < 0 !== x[i]! < 0) crossings++;
  return crossings / 2 / (x.length / rate);
};

describe("the console's resampler", () => {
  it.each([
    [44100, 16000, 1000],
    [48000, 16000, 440],
    [16000, 44100, 1000],
    [16000, 48000, 3000],
  ])("keeps a %i Hz -> %i Hz tone of %i Hz: its pitch, its level, the rate", (from, to, hz) => {
    const out = resample(tone(from, hz, 1), from, to);
    expect(Math.abs(out.length - to)).toBeLessThan(40);
    const steady = out.subarray(1000, out.length - 100);
    expect(frequencyOf(steady, to)).toBeCloseTo(hz, -1);
    expect(rmsOf(steady) / (0.5 / Math.SQRT2)).toBeCloseTo(1, 2);
  });

  it("removes what the lower rate cannot carry instead of folding it into speech (no aliasing)", () => {
    for (const [from, hz] of [
      [44100, 10000],
      [48000, 12000],
    ] as const) {
      const out = resample(tone(from, hz, 1), from, 16000).subarray(1000);
      expect(rmsOf(out)).toBeLessThan(0.01 * (0.5 / Math.SQRT2));
    }
  });

  it("starts afresh after reset (a barge-in's clear)", () => {
    const resampler = new Resampler(16000, 48000);
    resampler.process(Float32Array.from({ length: 320 }, () => 0.9));
    resampler.reset();
    const after = resampler.process(new Float32Array(320));
    expect(Math.max(...after.map(Math.abs))).toBe(0);
  });
});
