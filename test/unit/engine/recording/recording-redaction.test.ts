import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeWav, parseWav } from "../../../../engine/audio/wav.js";
import { toneOverStretches } from "../../../../engine/recording/recording-redaction.js";

const dir = mkdtempSync(path.join(tmpdir(), "parley-redact-rec-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stereo recording of `seconds` at 8 kHz: the caller's side 1000 + i % 7, the agent's -500. */
function recording(seconds: number): string {
  const frames = seconds * 8000;
  const samples = new Int16Array(frames * 2);
  for (let i = 0; i < frames; i++) {
    samples[2 * i] = 1000 + (i % 7);
    samples[2 * i + 1] = -500;
  }
  const file = path.join(dir, `call-${seconds}.wav`);
  writeFileSync(file, encodeWav({ sampleRate: 8000, channels: 2, samples }));
  return file;
}

describe("toneOverStretches", () => {
  it("tones over each stretch on its side only, in place, and cuts a stretch at the file's end", async () => {
    const file = recording(4);
    await toneOverStretches(file, [
      { role: "user", fromSeconds: 1, toSeconds: 2 },
      { role: "agent", fromSeconds: 3.5, toSeconds: 60 },
    ]);
    const { samples, channels, sampleRate } = parseWav(readFileSync(file));
    expect([channels, sampleRate, samples.length]).toEqual([2, 8000, 4 * 8000 * 2]);
    const tone = (i: number) => Math.round(3000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)) + 0;
    for (let i = 0; i < 4 * 8000; i++) {
      const caller = i >= 8000 && i < 16000 ? tone(i) : 1000 + (i % 7);
      const agent = i >= 28000 ? tone(i) : -500;
      if (samples[2 * i] !== caller || samples[2 * i + 1] !== agent) throw new Error(`frame ${i}: ${samples[2 * i]}, ${samples[2 * i + 1]}`);
    }
  });

  it("leaves the file untouched when there is nothing to hide", async () => {
    const file = recording(1);
    const before = readFileSync(file);
    await toneOverStretches(file, []);
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});
