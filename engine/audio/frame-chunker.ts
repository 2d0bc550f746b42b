import { samplesPerFrame } from "./audio-frame.js";

/**
 * Re-chunks a stream of PCM16 chunks of any length into exact 20 ms frames at one rate,
 * keeping the remainder for the next push. Frames are fresh copies: callers may reuse the
 * chunks they push.
 */
export class FrameChunker {
  readonly sampleRate: number;
  readonly frameSamples: number;
  private pending: Int16Array;
  private pendingLength = 0;

  constructor(sampleRate: number) {
    const frameSamples = samplesPerFrame(sampleRate);
    if (!Number.isInteger(frameSamples) || frameSamples <= 0) {
      throw new RangeError(`${sampleRate} Hz has no whole number of samples per 20 ms frame`);
    }
    this.sampleRate = sampleRate;
    this.frameSamples = frameSamples;
    this.pending = new Int16Array(frameSamples);
  }

  /** Samples held back until a frame is complete. */
  get pendingSamples(): number {
    return this.pendingLength;
  }

  /** Adds a chunk; returns the frames it completed (possibly none). */
  push(samples: Int16Array): Int16Array[] {
    const frames: Int16Array[] = [];
    let offset = 0;
    if (this.pendingLength > 0) {
      const take = Math.min(this.frameSamples - this.pendingLength, samples.length);
      this.pending.set(samples.subarray(0, take), this.pendingLength);
      this.pendingLength += take;
      offset = take;
      if (this.pendingLength < this.frameSamples) return frames;
      frames.push(this.pending);
      this.pending = new Int16Array(this.frameSamples);
      this.pendingLength = 0;
    }
    for (; offset + this.frameSamples <= samples.length; offset += this.frameSamples) {
      frames.push(samples.slice(offset, offset + this.frameSamples));
    }
    this.pending.set(samples.subarray(offset));
    this.pendingLength = samples.length - offset;
    return frames;
  }

  /**
   * Ends the stream: returns the partial last frame padded with silence to a full 20 ms (the
   * call path only carries whole frames; the padding is at most 20 ms of silence at the end
   * of an utterance), or no frame when nothing is pending. An array, like `push`.
   */
  flush(): Int16Array[] {
    if (this.pendingLength === 0) return [];
    const frame = this.pending;
    frame.fill(0, this.pendingLength);
    this.pending = new Int16Array(this.frameSamples);
    this.pendingLength = 0;
    return [frame];
  }

  /** Drops the pending remainder (a barge-in cut the stream). */
  reset(): void {
    this.pendingLength = 0;
  }
}
