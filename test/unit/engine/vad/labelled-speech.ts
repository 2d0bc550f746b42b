import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import { samplesPerFrame } from "../../../../engine/audio/audio-frame.js";
import type { Vad } from "../../../../engine/vad/vad.js";
import { speak } from "../../../helpers/flite-speech.js";

/**
 * Flite speech padded with silence (optionally under white noise), cut into 20 ms frames and
 * labelled from the clean signal: `speech` marks frames with loud speech, `silence` marks
 * padding frames well away from it (VADs smooth over a few hundred ms at the edges).
 */
export interface LabelledSpeech {
  frames: AudioFrame[];
  speech: boolean[];
  silence: boolean[];
}

export interface LabelledSpeechOptions {
  text: string;
  sampleRate: 8000 | 16000;
  /** `kal` speaks at 8 kHz; a 16 kHz voice asked for 8 kHz is decimated by averaging pairs. */
  voice?: string;
  /** RMS level of added white noise; none when absent. */
  noiseDbfs?: number;
  padMs?: number;
}

const SPEECH_RMS_DBFS = -30;
const EDGE_GUARD_MS = 300;
const AUDIBLE = 64;

function decimateByTwo(samples: Int16Array): Int16Array {
  const out = new Int16Array(samples.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = ((samples[2 * i] ?? 0) + (samples[2 * i + 1] ?? 0)) >> 1;
  return out;
}

/** Deterministic uniform white noise (a fixed LCG seed), so runs are reproducible. */
function addWhiteNoise(samples: Int16Array, dbfs: number): Int16Array {
  const amplitude = 32768 * 10 ** (dbfs / 20) * Math.sqrt(3);
  let seed = 0x2545f491;
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const noise = (seed / 2 ** 32) * 2 - 1;
    out[i] = Math.max(-32768, Math.min(32767, Math.round((samples[i] ?? 0) + noise * amplitude)));
  }
  return out;
}

function rmsDbfs(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return 20 * Math.log10(Math.sqrt(sum / Math.max(1, samples.length)) / 32768 + 1e-12);
}

export async function labelledSpeech(options: LabelledSpeechOptions): Promise<LabelledSpeech> {
  const { sampleRate, padMs = 1000 } = options;
  const spoken = await speak(options.text, options.voice ?? "slt");
  let samples = spoken.samples;
  if (spoken.sampleRate === 16000 && sampleRate === 8000) samples = decimateByTwo(samples);
  else if (spoken.sampleRate !== sampleRate) throw new Error(`voice gives ${spoken.sampleRate} Hz, wanted ${sampleRate} Hz`);

  const pad = (sampleRate * padMs) / 1000;
  const clean = new Int16Array(pad + samples.length + pad);
  clean.set(samples, pad);
  const first = clean.findIndex((s) => Math.abs(s) > AUDIBLE);
  const last = clean.findLastIndex((s) => Math.abs(s) > AUDIBLE);
  const guard = (sampleRate * EDGE_GUARD_MS) / 1000;
  const audio = options.noiseDbfs === undefined ? clean : addWhiteNoise(clean, options.noiseDbfs);

  const size = samplesPerFrame(sampleRate);
  const result: LabelledSpeech = { frames: [], speech: [], silence: [] };
  for (let start = 0; start + size <= audio.length; start += size) {
    result.frames.push({ samples: audio.slice(start, start + size), sampleRate });
    result.speech.push(rmsDbfs(clean.subarray(start, start + size)) > SPEECH_RMS_DBFS);
    result.silence.push(start + size < first - guard || start > last + guard);
  }
  return result;
}

/** Feeds frames one at a time, awaiting each, as a call does. */
export async function runVad(vad: Vad, frames: readonly AudioFrame[]): Promise<number[]> {
  const probabilities: number[] = [];
  for (const frame of frames) probabilities.push(await vad.process(frame));
  return probabilities;
}

/** Share of speech frames scored above 0.5, and of silence frames scored below it. */
export function score(labels: LabelledSpeech, probabilities: readonly number[]): { speech: number; silence: number } {
  const share = (marks: boolean[], hit: (p: number) => boolean) => {
    const picked = probabilities.filter((_, i) => marks[i]);
    return picked.filter(hit).length / picked.length;
  };
  return { speech: share(labels.speech, (p) => p > 0.5), silence: share(labels.silence, (p) => p < 0.5) };
}
