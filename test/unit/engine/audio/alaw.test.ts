import { describe, expect, it } from "vitest";
import { decodeAlaw, encodeAlaw } from "../../../../engine/audio/alaw.js";

/** An independent A-law reference: Sun's g711.c segment search (which agrees with ITU-T G.191 for A-law). */
function referenceEncode(sample: number): number {
  const segmentEnds = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];
  let value = sample >> 3;
  let mask = 0xd5;
  if (value < 0) {
    value = -value - 1;
    mask = 0x55;
  }
  const segment = segmentEnds.findIndex((end) => value <= end);
  if (segment < 0) return 0x7f ^ mask;
  const mantissa = segment < 2 ? (value >> 1) & 0x0f : (value >> segment) & 0x0f;
  return ((segment << 4) | mantissa) ^ mask;
}

const allSamples = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const allCodes = Uint8Array.from({ length: 256 }, (_, i) => i);

describe("A-law", () => {
  it("decodes known code words", () => {
    const codes = [0xd5, 0x55, 0x80, 0x00, 0xaa, 0x2a, 0xd4, 0xc5];
    expect(Array.from(decodeAlaw(Uint8Array.from(codes)))).toEqual([8, -8, 5504, -5504, 32256, -32256, 24, 264]);
  });

  it("encodes known samples", () => {
    const samples = [0, -1, 15, -16, 24, 264, 5504, -5504, 32767, -32768];
    expect(Array.from(encodeAlaw(Int16Array.from(samples)))).toEqual([0xd5, 0x55, 0xd5, 0x55, 0xd4, 0xc5, 0x80, 0x00, 0xaa, 0x2a]);
  });

  it("matches the reference encoder over the whole 16-bit range", () => {
    const encoded = encodeAlaw(allSamples);
    const mismatches = allSamples.filter((sample, i) => encoded[i] !== referenceEncode(sample));
    expect(mismatches.length).toBe(0);
  });

  it("re-encodes every decoded code word to itself", () => {
    expect(Array.from(encodeAlaw(decodeAlaw(allCodes)))).toEqual(Array.from(allCodes));
  });

  it("keeps the round-trip error within half a quantisation step", () => {
    const decoded = decodeAlaw(encodeAlaw(allSamples));
    let worstRelative = 0;
    for (let i = 0; i < allSamples.length; i++) {
      const sample = allSamples[i]!;
      const error = Math.abs(decoded[i]! - sample);
      // Segments 0 and 1 have steps of 16, segment e > 1 steps of 8 << e; the decoder answers mid-step.
      const magnitude = Math.abs(sample) >> 4;
      const segment = magnitude < 32 ? 1 : Math.floor(Math.log2(magnitude)) - 3;
      expect(error, `sample ${sample}`).toBeLessThanOrEqual((8 << segment) / 2 + (sample < 0 ? 16 : 0));
      if (Math.abs(sample) >= 256) worstRelative = Math.max(worstRelative, error / Math.abs(sample));
    }
    expect(worstRelative).toBeLessThan(1 / 30);
  });
});
