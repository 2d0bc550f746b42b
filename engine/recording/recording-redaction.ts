import { open } from "node:fs/promises";
import type { RedactedStretch } from "../text/redaction/redact-transcript.js";
import { parseWav, WAV_HEADER_BYTES } from "../audio/wav.js";

/** The tone said in place of redacted speech: 1 kHz, about -20 dBFS. */
const TONE_HZ = 1000;
const TONE_PEAK = 3000;
/** Frames read and rewritten at a time (a second at 48 kHz): memory stays small whatever the call's length. */
const BLOCK_FRAMES = 48_000;

/**
 * Replaces, in a call's recording (the stereo WAV CallRecorder writes: caller on the left,
 * agent on the right), each redacted stretch of its side with a tone, in place. The other side
 * is left as it was. A stretch past the end of the file is cut at the end.
 */
export async function toneOverStretches(path: string, stretches: readonly RedactedStretch[]): Promise<void> {
  if (stretches.length === 0) return;
  const file = await open(path, "r+");
  try {
    const header = Buffer.alloc(WAV_HEADER_BYTES);
    await file.read(header, 0, WAV_HEADER_BYTES, 0);
    const { sampleRate, channels } = parseWav(header);
    const frameBytes = 2 * channels;
    const frames = Math.floor(((await file.stat()).size - WAV_HEADER_BYTES) / frameBytes);
    for (const stretch of stretches) {
      const channel = stretch.role === "user" ? 0 : Math.min(1, channels - 1);
      const from = Math.max(0, Math.floor(stretch.fromSeconds * sampleRate));
      const to = Math.min(frames, Math.ceil(stretch.toSeconds * sampleRate));
      for (let start = from; start < to; start += BLOCK_FRAMES) {
        const count = Math.min(BLOCK_FRAMES, to - start);
        const block = Buffer.alloc(count * frameBytes);
        const offset = WAV_HEADER_BYTES + start * frameBytes;
        await file.read(block, 0, block.length, offset);
        for (let i = 0; i < count; i++) {
          const sample = Math.round(TONE_PEAK * Math.sin((2 * Math.PI * TONE_HZ * (start + i)) / sampleRate));
          block.writeInt16LE(sample, i * frameBytes + channel * 2);
        }
        await file.write(block, 0, block.length, offset);
      }
    }
  } finally {
    await file.close();
  }
}
