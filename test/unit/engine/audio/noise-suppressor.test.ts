import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { samplesPerFrame } from "../../../../engine/audio/audio-frame.js";
import { NoiseSuppressor } from "../../../../engine/audio/noise-suppressor.js";
import { Resampler } from "../../../../engine/audio/resampler.js";
import { speak } from "../../../helpers/flite-speech.js";
import { concat, noise, rmsOf } from "./signals.js";

const open: NoiseSuppressor[] = [];

async function suppressor(sampleRate: number): Promise<NoiseSuppressor> {
  const created = await NoiseSuppressor.create(sampleRate);
  open.push(created);
  return created;
}

afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/** `samples` through `s` in 20 ms frames, followed by enough silence to bring out the delayed tail; every frame checked for rate and length. */
function denoise(s: NoiseSuppressor, samples: Int16Array): Int16Array {
  const size = samplesPerFrame(s.sampleRate);
  const tail = Math.ceil((s.delayMs * s.sampleRate) / 1000 / size) * size;
  const padded = new Int16Array(Math.ceil(samples.length / size) * size + tail);
  padded.set(samples);
  const out: Int16Array[] = [];
  for (let i = 0; i < padded.length; i += size) {
    const frame = s.process({ samples: padded.subarray(i, i + size), sampleRate: s.sampleRate });
    expect(frame.sampleRate).toBe(s.sampleRate);
    expect(frame.samples.length).toBe(size);
    out.push(frame.samples);
  }
  return concat(out);
}

const db = (after: Int16Array, before: Int16Array) => 20 * Math.log10(rmsOf(after) / rmsOf(before));

let speech16k: Int16Array;
let speech8k: Int16Array;

beforeAll(async () => {
  const spoken = await speak("I would like to book a cleaning on Tuesday at ten in the morning, my name is Mary Jones.");
  expect(spoken.sampleRate).toBe(16000);
  speech16k = spoken.samples;
  const narrow = new Resampler({ inputRate: 16000, outputRate: 8000 });
  speech8k = concat([narrow.push(speech16k), narrow.flush()]);
}, 60_000);

describe("NoiseSuppressor", () => {
  for (const rate of [8000, 16000]) {
    it(`returns frames of the rate and length that went in, and white noise alone much quieter (${rate} Hz)`, async () => {
      const s = await suppressor(rate);
      const input = noise(rate * 3, 3000);
      const output = denoise(s, input);
      expect(output.length).toBeGreaterThanOrEqual(input.length);
      // After the first half second, in which RNNoise learns the noise floor (at 8 kHz the whole
      // two seconds drop only about 8 dB; from there on about 15 dB).
      const settled = (x: Int16Array) => x.subarray(rate / 2, input.length);
      expect(db(settled(output), settled(input))).toBeLessThan(-6);
    });

    it(`keeps most of the energy of speech (${rate} Hz)`, async () => {
      const s = await suppressor(rate);
      const input = rate === 8000 ? speech8k : speech16k;
      expect(db(denoise(s, input), input)).toBeGreaterThan(-3);
    });
  }

  it("delays its output by delayMs: the output lines up with the input there (20 ms at 8 kHz, 15 ms at 16 kHz)", async () => {
    for (const [rate, input, delayMs] of [[8000, speech8k, 20], [16000, speech16k, 15]] as const) {
      const s = await suppressor(rate);
      expect(s.delayMs).toBeCloseTo(delayMs, 6);
      const output = denoise(s, input);
      let best = -1;
      let bestScore = -Infinity;
      for (let lag = 0; lag < rate / 20; lag++) {
        let score = 0;
        for (let i = 0; i < input.length; i++) score += input[i]! * output[i + lag]!;
        if (score > bestScore) [best, bestScore] = [lag, score];
      }
      expect(Math.abs(best - (delayMs * rate) / 1000)).toBeLessThanOrEqual(1);
    }
  });

  it("keeps each stream's state its own: interleaved with a noisy stream, speech comes out as it does alone", async () => {
    const alone = denoise(await suppressor(8000), speech8k);
    const [noisy, clean] = [await suppressor(8000), await suppressor(8000)];
    const size = samplesPerFrame(8000);
    const loud = noise(alone.length, 12000, 99);
    const out: Int16Array[] = [];
    for (let i = 0; i < alone.length; i += size) {
      noisy.process({ samples: loud.subarray(i, i + size), sampleRate: 8000 });
      const padded = new Int16Array(size);
      padded.set(speech8k.subarray(i, i + size));
      out.push(clean.process({ samples: padded, sampleRate: 8000 }).samples);
    }
    expect(concat(out)).toEqual(alone);
  });

  it("refuses a rate it does not run at, a frame of another rate, and frames not a whole 10 ms", async () => {
    await expect(NoiseSuppressor.create(11025)).rejects.toThrow(RangeError);
    const s = await suppressor(8000);
    expect(() => s.process({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(RangeError);
    expect(() => s.process({ samples: new Int16Array(100), sampleRate: 8000 })).toThrow(RangeError);
  });
});
