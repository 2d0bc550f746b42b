import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeMulaw } from "../../../../engine/audio/mulaw.js";

/**
 * An independent mu-law reference written the other way round (segment search over the
 * decision thresholds, as in Sun's g711.c) with the ITU-T G.191 one's complement for
 * negative samples.
 */
function referenceEncode(sample: number): number {
  const segmentEnds = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
  let value = sample >> 2;
  let mask = 0xff;
  if (value < 0) {
    value = -value - 1;
    mask = 0x7f;
  }
  value = Math.min(value, 8159) + 33;
  const segment = segmentEnds.findIndex((end) => value <= end);
  if (segment < 0) return 0x7f ^ mask;
  return ((segment << 4) | ((value >> (segment + 1)) & 0x0f)) ^ mask;
}

const allSamples = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const allCodes = Uint8Array.from({ length: 256 }, (_, i) => i);

describe("mu-law", () => {
  it("decodes known code words", () => {
    const codes = [0x00, 0x80, 0xff, 0x7f, 0xfe, 0x7e, 0xf0, 0x70, 0xef, 0x8f];
    expect(Array.from(decodeMulaw(Uint8Array.from(codes)))).toEqual([-32124, 32124, 0, 0, 8, -8, 120, -120, 132, 16764]);
  });

  it("encodes known samples as the ITU-T reference does", () => {
    const samples = [0, -1, 1, 3, 4, 8, -8, 120, 132, 32767, -32768, 32124, -32124];
    expect(Array.from(encodeMulaw(Int16Array.from(samples)))).toEqual([0xff, 0x7f, 0xff, 0xff, 0xfe, 0xfe, 0x7e, 0xf0, 0xef, 0x80, 0x00, 0x80, 0x00]);
  });

  it("matches the reference encoder over the whole 16-bit range", () => {
    const encoded = encodeMulaw(allSamples);
    const mismatches = allSamples.filter((sample, i) => encoded[i] !== referenceEncode(sample));
    expect(mismatches.length).toBe(0);
  });

  it("re-encodes every decoded code word to itself, except negative zero", () => {
    const again = encodeMulaw(decodeMulaw(allCodes));
    const changed = allCodes.filter((code, i) => again[i] !== code);
    expect(Array.from(changed)).toEqual([0x7f]);
    expect(again[0x7f]).toBe(0xff);
  });

  it("keeps the round-trip error within half a quantisation step", () => {
    const decoded = decodeMulaw(encodeMulaw(allSamples));
    let worstRelative = 0;
    for (let i = 0; i < allSamples.length; i++) {
      const sample = allSamples[i]!;
      const error = Math.abs(decoded[i]! - sample);
      if (Math.abs(sample) <= 32124) {
        // Segment e has steps of 8 << e; the decoder answers mid-step.
        const magnitude = Math.min((Math.abs(sample) >> 2) + 33, 8191);
        const segment = Math.max(0, Math.floor(Math.log2(magnitude)) - 5);
        expect(error, `sample ${sample}`).toBeLessThanOrEqual((4 << segment) + 4);
        if (Math.abs(sample) >= 256) worstRelative = Math.max(worstRelative, error / Math.abs(sample));
      } else {
        expect(Math.abs(decoded[i]!)).toBe(32124); // clipped to the largest level
      }
    }
    expect(worstRelative).toBeLessThan(0.05);
  });

  it("is symmetric around zero for the decoder", () => {
    const decoded = decodeMulaw(allCodes);
    for (let code = 0; code < 128; code++) expect(decoded[code]! + decoded[code | 0x80]!).toBe(0);
  });
});
