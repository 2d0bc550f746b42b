import { describe, expect, it } from "vitest";
import { OpusCodec } from "../../../../engine/audio/opus.js";
import { Resampler } from "../../../../engine/audio/resampler.js";
import { speak } from "../../../helpers/flite-speech.js";
import { bestLag, concat, fitTone, sine } from "./signals.js";

/** Encodes in 20 ms frames (padding the end with silence) and decodes every packet. */
function roundTrip(codec: OpusCodec, input: Int16Array): { output: Int16Array; packets: Buffer[] } {
  const frames = Math.ceil(input.length / codec.frameSamples);
  const padded = new Int16Array(frames * codec.frameSamples);
  padded.set(input);
  const packets: Buffer[] = [];
  const decoded: Int16Array[] = [];
  for (let i = 0; i < frames; i++) {
    const packet = codec.encode(padded.subarray(i * codec.frameSamples, (i + 1) * codec.frameSamples));
    packets.push(packet);
    decoded.push(codec.decode(packet));
  }
  return { output: concat(decoded), packets };
}

describe("OpusCodec", () => {
  it.each([16000, 48000] as const)("encodes and decodes a 440 Hz tone at %i Hz", (rate) => {
    const codec = new OpusCodec(rate);
    const input = sine(440, rate, rate, 8000);
    const { output, packets } = roundTrip(codec, input);
    expect(packets.length).toBe(50);
    expect(output.length).toBe(input.length);
    // A tone's lag is ambiguous by whole periods; the speech test pins the codec delay down.
    expect(bestLag(input, output, rate / 50).correlation).toBeGreaterThan(0.95);
    const fit = fitTone(output, 440, rate, rate / 4, (rate * 3) / 4);
    expect(Math.abs(20 * Math.log10(fit.amplitude / 8000))).toBeLessThan(1);
    expect(fit.residualDb).toBeLessThan(-30);
    // 24 kb/s: about 60 bytes per 20 ms packet.
    const meanBytes = packets.reduce((sum, packet) => sum + packet.length, 0) / packets.length;
    expect(meanBytes).toBeGreaterThan(20);
    expect(meanBytes).toBeLessThan(100);
  });

  it.each([16000, 48000] as const)("keeps speech close to the input after the codec delay (about 6.5 ms) at %i Hz", async (rate) => {
    const speech = await speak("Thank you for calling. How can I help you today?");
    expect(speech.sampleRate).toBe(16000);
    const resampler = new Resampler({ inputRate: 16000, outputRate: rate });
    const input = concat([resampler.push(speech.samples), resampler.flush()]);
    const codec = new OpusCodec(rate);
    const { output } = roundTrip(codec, input);
    expect(output.length).toBe(Math.ceil(input.length / codec.frameSamples) * codec.frameSamples);
    const { lag, correlation } = bestLag(input, output, rate / 100);
    expect(lag).toBeGreaterThanOrEqual(Math.round(rate * 0.006));
    expect(lag).toBeLessThanOrEqual(Math.round(rate * 0.007));
    expect(correlation).toBeGreaterThan(0.85);
  });

  it("refuses frames that are not 20 ms, rates Opus lacks and empty or corrupt packets", () => {
    const codec = new OpusCodec(16000);
    expect(() => codec.encode(new Int16Array(160))).toThrow(/20 ms/);
    expect(() => new OpusCodec(44100)).toThrow(RangeError);
    expect(() => codec.decode(new Uint8Array(0))).toThrow(RangeError);
    expect(() => codec.decode(Buffer.from([0xff, 0xff, 0xff]))).toThrow();
  });
});
