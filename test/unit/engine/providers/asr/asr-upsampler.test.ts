import { describe, expect, it } from "vitest";
import { AsrError } from "../../../../../engine/providers/asr/asr-error.js";
import { AsrUpsampler } from "../../../../../engine/providers/asr/asr-upsampler.js";

function frame(values: number[], sampleRate = 8000) {
  return { samples: Int16Array.from(values), sampleRate };
}

/** Energy of `samples` at `frequency` Hz (a single DFT bin), relative to the signal's total energy. */
function shareAt(samples: Int16Array, sampleRate: number, frequency: number): number {
  let re = 0;
  let im = 0;
  let total = 0;
  for (let n = 0; n < samples.length; n++) {
    const angle = (2 * Math.PI * frequency * n) / sampleRate;
    re += samples[n]! * Math.cos(angle);
    im -= samples[n]! * Math.sin(angle);
    total += samples[n]! ** 2;
  }
  return (2 * (re * re + im * im)) / samples.length / total;
}

describe("AsrUpsampler", () => {
  it("doubles 8 kHz audio by linear interpolation, starting from the first sample", () => {
    const output = new AsrUpsampler().process(frame([100, 200, -100, 0]));
    expect([...output]).toEqual([100, 100, 150, 200, 50, -100, -50, 0]);
  });

  it("joins frames without a step: frame by frame equals all at once", () => {
    const input = Array.from({ length: 480 }, (_, n) => Math.round(8000 * Math.sin(n / 7)));
    const whole = new AsrUpsampler().process(frame(input));
    const streaming = new AsrUpsampler();
    const pieces = [0, 160, 320].map((start) => streaming.process(frame(input.slice(start, start + 160))));
    expect([...pieces.flatMap((piece) => [...piece])]).toEqual([...whole]);
  });

  it("leaves the spectral image above 4 kHz that pocketsphinx needs", () => {
    // A 3 kHz tone at 8 kHz; linear interpolation keeps a fifth of its energy as an image at 8 - 3 = 5 kHz.
    const tone = Array.from({ length: 1600 }, (_, n) => Math.round(10000 * Math.sin((2 * Math.PI * 3000 * n) / 8000)));
    const output = new AsrUpsampler().process(frame(tone));
    expect(shareAt(output, 16000, 5000)).toBeGreaterThan(0.1);
    expect(shareAt(output, 16000, 3000)).toBeGreaterThan(0.6);
  });

  it("passes 16 kHz audio through untouched", () => {
    const input = frame([1, -2, 3], 16000);
    expect(new AsrUpsampler().process(input)).toBe(input.samples);
  });

  it("refuses other rates with an error that says what to do", () => {
    const upsampler = new AsrUpsampler();
    expect(() => upsampler.process(frame([0, 0], 48000))).toThrow(AsrError);
    expect(() => upsampler.process(frame([0, 0], 48000))).toThrow(/not 48000 Hz: resample it to 16000 Hz/);
  });
});
