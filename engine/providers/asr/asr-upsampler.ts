import type { AudioFrame } from "../../audio/audio-frame.js";
import { AsrError } from "./asr-error.js";

/** The rate of pocketsphinx's US-English model. */
export const ASR_SAMPLE_RATE = 16000;

/** Input rates the upsampler accepts: telephony and the model's own rate. */
export const ASR_INPUT_RATES = [8000, 16000] as const;

/**
 * The embedded ASR's own input path: 8 kHz telephony audio to 16 kHz by linear
 * interpolation; 16 kHz passes through untouched.
 *
 * Deliberately not the engine's high-quality resampler: linear interpolation leaves spectral
 * images above 4 kHz, and pocketsphinx's 16 kHz model (filterbank up to 6.8 kHz) reads
 * telephony audio well only with them; a sharp upsampler leaves those channels empty and
 * recognition falls apart (DESIGN.md, "Embedded defaults"; guarded by a test). Other rates
 * are refused: they need the high-quality resampler in front, not this path.
 *
 * Streaming: one instance per utterance; it keeps the last input sample so that frames join
 * without a step. Output for each 8 kHz sample n is [(x[n-1] + x[n]) / 2, x[n]]: twice as
 * many samples, half an input sample late, no look-ahead.
 */
export class AsrUpsampler {
  private previous: number | undefined;

  /** Returns the frame's samples at 16 kHz. */
  process(frame: AudioFrame): Int16Array {
    if (frame.sampleRate === ASR_SAMPLE_RATE) return frame.samples;
    if (frame.sampleRate !== 8000) {
      throw new AsrError(
        "unsupported_audio",
        `the pocketsphinx recognizer takes ${ASR_INPUT_RATES.join(" or ")} Hz audio, not ${frame.sampleRate} Hz: resample it to 16000 Hz first`,
        { retryable: false },
      );
    }
    const input = frame.samples;
    const output = new Int16Array(input.length * 2);
    // The first frame starts from its own first sample: no click from an implied zero.
    let previous = this.previous ?? input[0] ?? 0;
    for (let n = 0; n < input.length; n++) {
      const current = input[n]!;
      output[2 * n] = (previous + current) >> 1;
      output[2 * n + 1] = current;
      previous = current;
    }
    this.previous = previous;
    return output;
  }
}
