import type { AudioFrame } from "../../../audio/audio-frame.js";
import { Resampler } from "../../../audio/resampler.js";

/** The rate Whisper models take (servers resample anything else to it anyway). */
export const TRANSCRIPTION_SAMPLE_RATE = 16_000;

/**
 * One utterance's audio, converted to 16 kHz mono PCM16 as its frames arrive (so the work is
 * spread over the utterance rather than done after "finish now"), keeping only its last
 * `maxSeconds`. The engine's high-quality resampler is used, not the embedded ASR's linear
 * upsampler: the images that one leaves above 4 kHz help pocketsphinx's model only.
 */
export class UtteranceAudio {
  private readonly resampler: Resampler;
  private readonly limit: number;
  private readonly chunks: Int16Array[] = [];
  private length = 0;
  private received = 0;

  constructor(
    readonly inputRate: number,
    maxSeconds: number,
  ) {
    this.resampler = new Resampler({ inputRate, outputRate: TRANSCRIPTION_SAMPLE_RATE });
    this.limit = Math.round(maxSeconds * TRANSCRIPTION_SAMPLE_RATE);
  }

  /** Input samples taken so far (0: nothing to recognize). */
  get inputSamples(): number {
    return this.received;
  }

  push(frame: AudioFrame): void {
    if (frame.samples.length === 0) return;
    this.received += frame.samples.length;
    this.keep(this.resampler.push(frame.samples));
  }

  /** The utterance's last `maxSeconds` at 16 kHz; the collector is spent afterwards. */
  finish(): Int16Array {
    this.keep(this.resampler.flush());
    const out = new Int16Array(Math.min(this.length, this.limit));
    let at = out.length;
    // Filled from the end: the oldest chunk may be cut.
    for (let i = this.chunks.length - 1; i >= 0 && at > 0; i--) {
      const chunk = this.chunks[i]!;
      const take = Math.min(chunk.length, at);
      out.set(chunk.subarray(chunk.length - take), at - take);
      at -= take;
    }
    this.chunks.length = 0;
    this.length = 0;
    return out;
  }

  /** Appends and drops whole chunks that lie entirely before the last `limit` samples: memory stays bounded however long the caller talks. */
  private keep(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.chunks.push(samples);
    this.length += samples.length;
    while (this.chunks.length > 1 && this.length - this.chunks[0]!.length >= this.limit) this.length -= this.chunks.shift()!.length;
  }
}
