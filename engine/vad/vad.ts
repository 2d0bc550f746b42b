import type { AudioFrame } from "../audio/audio-frame.js";

/**
 * Voice activity detection for one audio stream (one per call direction: it keeps state).
 * Fed 20 ms frames at the stream's own rate; answers the probability that the frame holds
 * speech. Implementations that need longer windows buffer internally and answer with the
 * latest window's probability.
 */
export interface Vad {
  readonly name: string;
  /** Sample rates this VAD accepts natively. */
  readonly sampleRates: readonly number[];
  process(frame: AudioFrame): Promise<number>;
  /** Forgets the stream's state (a new utterance or a new stream). */
  reset(): void;
  close(): Promise<void>;
}
