import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WavFileWriter } from "../../../../engine/audio/wav-file-writer.js";
import { parseWav } from "../../../../engine/audio/wav.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-wav-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("WavFileWriter", () => {
  it("creates the file readable by its owner only (recordings are private)", async () => {
    const file = path.join(dir, "private.wav");
    const writer = await WavFileWriter.open(file, { sampleRate: 8000, channels: 1 });
    await writer.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("writes chunks incrementally and fixes the sizes at close", async () => {
    const file = path.join(dir, "out.wav");
    const writer = await WavFileWriter.open(file, { sampleRate: 16000, channels: 2 });
    const chunk = Int16Array.from([1, -1, 2, -2]);
    writer.write(chunk);
    chunk.fill(99); // the writer copied it
    writer.write(Int16Array.from([3, -3]));
    const info = await writer.close();
    expect(info).toEqual({ path: file, frames: 3, dataBytes: 12 });
    const bytes = readFileSync(file);
    expect(bytes.length).toBe(56);
    expect(bytes.readUInt32LE(4)).toBe(48);
    expect(bytes.readUInt32LE(40)).toBe(12);
    const parsed = parseWav(bytes);
    expect(parsed).toMatchObject({ sampleRate: 16000, channels: 2 });
    expect(Array.from(parsed.samples)).toEqual([1, -1, 2, -2, 3, -3]);
  });

  it("leaves a readable file up to the last write when it is never closed (a crash)", async () => {
    const file = path.join(dir, "crash.wav");
    const writer = await WavFileWriter.open(file, { sampleRate: 8000, channels: 1 });
    expect(parseWav(readFileSync(file)).samples.length).toBe(0);
    writer.write(Int16Array.from([10, 20, 30]));
    writer.write(Int16Array.from([40]));
    await writer.flush();
    const bytes = readFileSync(file);
    expect(bytes.readUInt32LE(40)).toBe(0xffffffff);
    expect(Array.from(parseWav(bytes).samples)).toEqual([10, 20, 30, 40]);
    await writer.close();
  });

  it("refuses writes after close and samples that do not split into channels", async () => {
    const writer = await WavFileWriter.open(path.join(dir, "x.wav"), { sampleRate: 8000, channels: 2 });
    expect(() => writer.write(new Int16Array(3))).toThrow(RangeError);
    await writer.close();
    expect(() => writer.write(new Int16Array(2))).toThrow(/closed/);
    await expect(writer.close()).rejects.toThrow(/closed/);
  });

  it("fails to open in a missing directory", async () => {
    await expect(WavFileWriter.open(path.join(dir, "missing", "x.wav"), { sampleRate: 8000, channels: 1 })).rejects.toThrow(/ENOENT/);
  });
});
