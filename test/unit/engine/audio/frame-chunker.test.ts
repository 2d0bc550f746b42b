import { describe, expect, it } from "vitest";
import { FrameChunker } from "../../../../engine/audio/frame-chunker.js";

function ramp(from: number, count: number): Int16Array {
  return Int16Array.from({ length: count }, (_, i) => from + i);
}

describe("FrameChunker", () => {
  it("cuts 20 ms frames at the stream's rate", () => {
    expect(new FrameChunker(8000).frameSamples).toBe(160);
    expect(new FrameChunker(16000).frameSamples).toBe(320);
    expect(new FrameChunker(48000).frameSamples).toBe(960);
  });

  it("re-chunks arbitrary chunks into exact frames, in order, keeping the remainder", () => {
    const chunker = new FrameChunker(8000);
    expect(chunker.push(ramp(0, 100))).toEqual([]);
    expect(chunker.pendingSamples).toBe(100);
    const frames = chunker.push(ramp(100, 400)); // 500 samples in total: 3 frames + 20
    expect(frames.map((frame) => frame.length)).toEqual([160, 160, 160]);
    expect(Array.from(frames[0]!)).toEqual(Array.from(ramp(0, 160)));
    expect(Array.from(frames[2]!)).toEqual(Array.from(ramp(320, 160)));
    expect(chunker.pendingSamples).toBe(20);
    const next = chunker.push(ramp(500, 140));
    expect(next.length).toBe(1);
    expect(Array.from(next[0]!)).toEqual(Array.from(ramp(480, 160)));
    expect(chunker.pendingSamples).toBe(0);
  });

  it("hands out copies, so pushed chunks can be reused", () => {
    const chunker = new FrameChunker(8000);
    const chunk = ramp(0, 160);
    const [frame] = chunker.push(chunk);
    chunk.fill(0);
    expect(frame![159]).toBe(159);
  });

  it("pads the last partial frame with silence on flush", () => {
    const chunker = new FrameChunker(8000);
    chunker.push(ramp(1, 170));
    const flushed = chunker.flush();
    expect(flushed.length).toBe(1);
    const last = flushed[0]!;
    expect(last.length).toBe(160);
    expect(Array.from(last.subarray(0, 10))).toEqual(Array.from(ramp(161, 10)));
    expect(last.subarray(10).every((sample) => sample === 0)).toBe(true);
    expect(chunker.flush()).toEqual([]);
    expect(chunker.push(ramp(0, 160)).length).toBe(1);
  });

  it("drops the remainder on reset", () => {
    const chunker = new FrameChunker(16000);
    chunker.push(ramp(7, 100));
    chunker.reset();
    expect(chunker.flush()).toEqual([]);
    const [frame] = chunker.push(ramp(0, 320));
    expect(frame![0]).toBe(0);
  });

  it("refuses rates without a whole number of samples per frame", () => {
    expect(() => new FrameChunker(11025)).toThrow(RangeError);
  });
});
