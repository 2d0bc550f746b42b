import { describe, expect, it } from "vitest";
import { bytesToPcm16, dbfs, float32ToPcm16, mixPcm16, pcm16ToBytes, pcm16ToFloat32, rms } from "../../../../engine/audio/pcm16.js";
import { sine } from "./signals.js";

describe("PCM16 bytes", () => {
  it("reads little-endian bytes", () => {
    const bytes = Buffer.from([0x01, 0x00, 0xff, 0xff, 0x00, 0x80, 0xff, 0x7f]);
    expect(Array.from(bytesToPcm16(bytes))).toEqual([1, -1, -32768, 32767]);
  });

  it("shares memory when the offset is even and copies when it is odd", () => {
    const backing = new Uint8Array([0, 0x34, 0x12, 0x78, 0x56, 0]);
    const even = bytesToPcm16(backing.subarray(2, 4));
    expect(even.buffer).toBe(backing.buffer);
    expect(Array.from(even)).toEqual([0x7812]);
    const odd = bytesToPcm16(backing.subarray(1, 5));
    expect(odd.buffer).not.toBe(backing.buffer);
    expect(Array.from(odd)).toEqual([0x1234, 0x5678]);
  });

  it("refuses an odd number of bytes", () => {
    expect(() => bytesToPcm16(new Uint8Array(3))).toThrow(RangeError);
  });

  it("writes little-endian bytes that share memory with the samples", () => {
    const samples = Int16Array.from([1, -1, -32768, 32767]);
    const bytes = pcm16ToBytes(samples);
    expect(Array.from(bytes)).toEqual([0x01, 0x00, 0xff, 0xff, 0x00, 0x80, 0xff, 0x7f]);
    samples[0] = 2;
    expect(bytes[0]).toBe(2);
  });

  it("round-trips a subarray view", () => {
    const samples = Int16Array.from([5, 6, 7, 8]).subarray(1, 3);
    expect(Array.from(bytesToPcm16(pcm16ToBytes(samples)))).toEqual([6, 7]);
  });
});

describe("PCM16 floats", () => {
  it("converts to [-1, 1) and back exactly", () => {
    const samples = Int16Array.from([-32768, -16384, 0, 1, 16384, 32767]);
    const floats = pcm16ToFloat32(samples);
    expect(Array.from(floats)).toEqual([-1, -0.5, 0, 1 / 32768, 0.5, 32767 / 32768]);
    expect(Array.from(float32ToPcm16(floats))).toEqual(Array.from(samples));
  });

  it("clips out-of-range floats", () => {
    expect(Array.from(float32ToPcm16(Float32Array.from([1, 1.5, -1.5, -1])))).toEqual([32767, 32767, -32768, -32768]);
  });
});

describe("levels", () => {
  it("measures RMS and dBFS against full scale", () => {
    expect(rms(new Int16Array([16384, -16384, 16384, -16384]))).toBe(0.5);
    expect(dbfs(new Int16Array([16384, -16384]))).toBeCloseTo(-6.0206, 3);
    // A full-scale sine is 3 dB below a full-scale square wave.
    expect(dbfs(sine(1000, 16000, 16000, 32767))).toBeCloseTo(-3.01, 2);
    expect(dbfs(new Int16Array(160))).toBe(-Infinity);
    expect(rms(new Int16Array(0))).toBe(0);
  });
});

describe("mixing", () => {
  it("adds sample by sample, clips, and pads the shorter stream with silence", () => {
    const a = Int16Array.from([1000, 30000, -30000, 5]);
    const b = Int16Array.from([-500, 10000, -10000]);
    expect(Array.from(mixPcm16(a, b))).toEqual([500, 32767, -32768, 5]);
    expect(Array.from(mixPcm16(b, a))).toEqual([500, 32767, -32768, 5]);
  });
});
