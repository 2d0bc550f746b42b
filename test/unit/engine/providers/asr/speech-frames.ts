import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { samplesPerFrame } from "../../../../../engine/audio/audio-frame.js";

/**
 * Speech as a live stream of 20 ms frames. Each frame waits for the event loop to turn, so
 * concurrent streams interleave as real calls do. With `stopAfter`, the stream delivers that
 * many frames, then waits for `release` (a caller still on the line) and ends.
 */
export async function* speechFrames(
  samples: Int16Array,
  sampleRate: number,
  options: { stopAfter?: number; release?: Promise<void> } = {},
): AsyncGenerator<AudioFrame> {
  const size = samplesPerFrame(sampleRate);
  let sent = 0;
  for (let start = 0; start < samples.length; start += size) {
    if (sent === options.stopAfter) {
      await options.release;
      return;
    }
    await new Promise((resolve) => setImmediate(resolve));
    yield { samples: samples.slice(start, start + size), sampleRate };
    sent++;
  }
}
