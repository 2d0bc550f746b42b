import { describe, expect, it } from "vitest";
import { Resampler } from "../../../../engine/audio/resampler.js";
import { concat, fitTone, noise, rmsOf, sine } from "./signals.js";

function convert(samples: Int16Array, inputRate: number, outputRate: number): Int16Array {
  const resampler = new Resampler({ inputRate, outputRate });
  return concat([resampler.push(samples), resampler.flush()]);
}

/** Steady-state middle half of a signal (away from the start and end transients). */
function middle(samples: Int16Array): [number, number] {
  return [Math.floor(samples.length / 4), Math.floor((samples.length * 3) / 4)];
}

const RATE_PAIRS = [
  [16000, 8000],
  [8000, 16000],
  [24000, 16000],
  [48000, 16000],
  [8000, 48000],
  [16000, 24000],
  [16000, 48000],
  [24000, 8000],
] as const;

describe("Resampler", () => {
  it("keeps a 1 kHz tone's frequency and amplitude through 16k -> 8k -> 16k", () => {
    const input = sine(1000, 16000, 16000);
    const output = convert(convert(input, 16000, 8000), 8000, 16000);
    expect(output.length).toBe(input.length);
    const fit = fitTone(output, 1000, 16000, ...middle(output));
    expect(fit.amplitude).toBeGreaterThan(9990);
    expect(fit.amplitude).toBeLessThan(10010);
    expect(fit.residualDb).toBeLessThan(-60);
  });

  it.each([
    [24000, 16000],
    [48000, 16000],
    [8000, 48000],
    [16000, 8000],
    [8000, 16000],
  ] as const)("keeps a 1 kHz tone clean from %i to %i Hz", (inputRate, outputRate) => {
    const output = convert(sine(1000, inputRate, inputRate), inputRate, outputRate);
    expect(output.length).toBe(outputRate);
    const fit = fitTone(output, 1000, outputRate, ...middle(output));
    expect(Math.abs(fit.amplitude - 10000)).toBeLessThan(10);
    // Anything else (images, aliases, a shifted frequency) would leave energy behind.
    expect(fit.residualDb).toBeLessThan(-60);
  });

  it("keeps the telephone band: 3.4 kHz through 16k -> 8k within 0.1 dB", () => {
    const output = convert(sine(3400, 16000, 16000), 16000, 8000);
    const fit = fitTone(output, 3400, 8000, ...middle(output));
    expect(Math.abs(20 * Math.log10(fit.amplitude / 10000))).toBeLessThan(0.1);
  });

  it.each([
    [6000, 16000, 8000],
    [4200, 16000, 8000],
    [9000, 48000, 16000],
    [10000, 24000, 16000],
  ] as const)("removes a %i Hz tone that would alias when going from %i to %i Hz", (frequency, inputRate, outputRate) => {
    const output = convert(sine(frequency, inputRate, inputRate), inputRate, outputRate);
    const level = 20 * Math.log10(rmsOf(output, ...middle(output)) / (10000 / Math.SQRT2));
    expect(level).toBeLessThan(-70);
  });

  it("leaves no images when upsampling 1 kHz from 8 kHz to 48 kHz", () => {
    const output = convert(sine(1000, 8000, 8000), 8000, 48000);
    for (const image of [7000, 9000, 15000, 17000, 23000]) {
      const fit = fitTone(output, image, 48000, ...middle(output));
      expect(20 * Math.log10(fit.amplitude / 10000), `${image} Hz`).toBeLessThan(-70);
    }
  });

  it.each(RATE_PAIRS)("gives the same samples chunked as one-shot (%i -> %i Hz)", (inputRate, outputRate) => {
    const input = noise(inputRate / 2 + 37);
    const oneShot = convert(input, inputRate, outputRate);
    const resampler = new Resampler({ inputRate, outputRate });
    const chunks: Int16Array[] = [];
    const sizes = [1, 7, 160, 3, 333, 0, 2, 961];
    for (let offset = 0, i = 0; offset < input.length; i++) {
      const size = sizes[i % sizes.length]!;
      chunks.push(resampler.push(input.subarray(offset, offset + size)));
      offset += size;
    }
    chunks.push(resampler.flush());
    const chunked = concat(chunks);
    expect(chunked.length).toBe(Math.ceil((input.length * outputRate) / inputRate));
    expect(Array.from(chunked)).toEqual(Array.from(oneShot));
  });

  it.each(RATE_PAIRS)("compensates its group delay: an impulse stays at the same time (%i -> %i Hz)", (inputRate, outputRate) => {
    const input = new Int16Array(inputRate / 10);
    const at = inputRate / 20; // 50 ms
    input[at] = 20000;
    const output = convert(input, inputRate, outputRate);
    let peak = 0;
    for (let i = 1; i < output.length; i++) if (output[i]! > output[peak]!) peak = i;
    expect(peak).toBe(outputRate / 20);
  });

  it("documents its latency and holds back exactly that much input", () => {
    const resampler = new Resampler({ inputRate: 8000, outputRate: 16000 });
    expect(resampler.latencyMs).toBe(5);
    expect(new Resampler({ inputRate: 48000, outputRate: 16000 }).latencyMs).toBe(2.5);
    expect(new Resampler({ inputRate: 16000, outputRate: 16000 }).latencyMs).toBe(0);
    // 100 ms in: output up to 95 ms is complete (5 ms held back), the rest comes with flush().
    expect(resampler.push(new Int16Array(800)).length).toBe(1520);
    expect(resampler.flush().length).toBe(80);
  });

  it("starts a fresh stream after flush() and after reset()", () => {
    const input = noise(1234);
    const resampler = new Resampler({ inputRate: 24000, outputRate: 16000 });
    const first = concat([resampler.push(input), resampler.flush()]);
    const second = concat([resampler.push(input), resampler.flush()]);
    expect(Array.from(second)).toEqual(Array.from(first));
    resampler.push(noise(500, 8000, 99));
    resampler.reset();
    expect(Array.from(concat([resampler.push(input), resampler.flush()]))).toEqual(Array.from(first));
  });

  it("passes audio through unchanged when the rates match", () => {
    const input = noise(320);
    expect(Array.from(convert(input, 16000, 16000))).toEqual(Array.from(input));
  });

  it("refuses bad rates", () => {
    expect(() => new Resampler({ inputRate: 0, outputRate: 16000 })).toThrow(RangeError);
    expect(() => new Resampler({ inputRate: 16000.5, outputRate: 8000 })).toThrow(RangeError);
  });
});
