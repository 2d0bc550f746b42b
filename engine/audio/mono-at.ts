import { Resampler } from "./resampler.js";
import type { WavAudio } from "./wav.js";

/** Decoded audio as one channel (the channels averaged) at `rate` (resampled whole, its tail flushed). */
export function monoAt(audio: WavAudio, rate: number): Int16Array {
  const frames = audio.samples.length / audio.channels;
  let mono = audio.samples;
  if (audio.channels > 1) {
    mono = new Int16Array(frames);
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < audio.channels; c++) sum += audio.samples[i * audio.channels + c]!;
      mono[i] = Math.round(sum / audio.channels);
    }
  }
  if (audio.sampleRate === rate) return mono;
  const resampler = new Resampler({ inputRate: audio.sampleRate, outputRate: rate });
  const head = resampler.push(mono);
  const tail = resampler.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}
