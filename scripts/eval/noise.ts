import { renderSpeech } from "./speech-sources.js";

/**
 * Noise added to evaluation speech at a chosen signal-to-noise ratio. The ratio is the speech's
 * power over its non-silent frames (speechActivity) to the noise's power over those same
 * frames: the pauses between words do not dilute the speech's level, and it is the noise the
 * recognizer hears while words are spoken. Everything is deterministic for a seed.
 */

export type NoiseKind = "white" | "babble" | "street";

export interface NoiseOptions {
  kind: NoiseKind;
  seed: number;
  /**
   * For "babble": the talkers, speech of unrelated sentences (see babbleTalkers). Babble is
   * real speech, several talkers summed at seeded offsets, not shaped noise: what a recognizer
   * confuses with the caller is other words.
   */
  talkers?: readonly Int16Array[];
}

/** 20 ms at 16 kHz: the frames speechActivity classifies. */
export const ACTIVITY_FRAME = 320;
/** A frame is speech when its power is within this many dB of the loudest frame's. */
export const ACTIVITY_FLOOR_DB = 35;
/** How many talkers make the babble (fewer when fewer are given). */
const BABBLE_TALKERS = 6;

/** Per sample: is it in a non-silent frame of `samples` (a frame within ACTIVITY_FLOOR_DB of the loudest)? */
export function speechActivity(samples: Int16Array): Uint8Array {
  const frames = Math.ceil(samples.length / ACTIVITY_FRAME);
  const power = new Float64Array(frames);
  for (let f = 0; f < frames; f++) power[f] = meanSquare(samples, f * ACTIVITY_FRAME, Math.min(samples.length, (f + 1) * ACTIVITY_FRAME));
  const loudest = Math.max(0, ...power);
  const floor = loudest * 10 ** (-ACTIVITY_FLOOR_DB / 10);
  const active = new Uint8Array(samples.length);
  for (let f = 0; f < frames; f++) if (loudest > 0 && power[f]! >= floor) active.fill(1, f * ACTIVITY_FRAME, Math.min(samples.length, (f + 1) * ACTIVITY_FRAME));
  return active;
}

/** Mean square of `signal` over the samples `mask` marks. */
export function maskedPower(signal: ArrayLike<number>, mask: Uint8Array): number {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i]) {
      sum += signal[i]! * signal[i]!;
      count++;
    }
  }
  return count ? sum / count : 0;
}

/** `samples` with noise of `kind` added at `snrDb` (over the speech's non-silent part), clipped to int16. */
export function withNoise(samples: Int16Array, snrDb: number, options: NoiseOptions): Int16Array {
  if (!Number.isFinite(snrDb)) throw new Error(`SNR must be a finite number of dB, not ${snrDb}`);
  const mask = speechActivity(samples);
  const speechPower = maskedPower(samples, mask);
  if (speechPower === 0) throw new Error("no speech to add noise to: the samples are silent");
  const random = seededRandom(options.seed);
  const noise = options.kind === "white" ? whiteNoise(samples.length, random) : options.kind === "street" ? streetNoise(samples.length, random) : babble(samples.length, options.talkers, random);
  const noisePower = maskedPower(noise, mask);
  if (noisePower === 0) throw new Error(`the ${options.kind} noise is silent over the speech (talkers too short or silent?)`);
  const gain = Math.sqrt(speechPower / (noisePower * 10 ** (snrDb / 10)));
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! + gain * noise[i]!)));
  return out;
}

/**
 * Speech of unrelated sentences (nothing a booking caller says) in each of `voiceIds`, for
 * babble: rendered (and cached) like the evaluation's speech.
 */
export async function babbleTalkers(voiceIds: readonly string[], cacheDir?: string): Promise<Int16Array[]> {
  const talkers: Int16Array[] = [];
  for (const [i, voiceId] of voiceIds.entries()) {
    for (const j of [0, 1]) {
      const sentence = BABBLE_SENTENCES[(i * 2 + j) % BABBLE_SENTENCES.length]!;
      talkers.push((await renderSpeech(sentence, voiceId, cacheDir)).samples);
    }
  }
  return talkers;
}

const BABBLE_SENTENCES = [
  "the committee will publish its findings after the summer recess",
  "a cold front moving in from the west brings rain to the coast",
  "she parked the bicycle behind the library and walked to the market",
  "the orchestra rehearsed the second movement until late in the evening",
  "several shipments were delayed at the harbour because of the strike",
  "he painted the fence green and then regretted the colour",
  "our neighbours adopted a very energetic dog from the shelter",
  "the museum opens a new exhibition of old maps and globes",
];

/** A generator of numbers in [0, 1), the same sequence for the same seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function gaussian(random: () => number): number {
  // Box-Muller; 1 - random() keeps the logarithm's argument above zero.
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function whiteNoise(length: number, random: () => number): Float64Array {
  const noise = new Float64Array(length);
  for (let i = 0; i < length; i++) noise[i] = gaussian(random);
  return noise;
}

/**
 * Street noise, shaped: a low rumble (white noise through two one-pole low-passes, most of its
 * power under a few hundred hertz, like traffic), a little hiss on top, and a slow swell of a
 * few seconds' period (vehicles passing). Not a recording.
 */
function streetNoise(length: number, random: () => number): Float64Array {
  const noise = new Float64Array(length);
  const a = Math.exp((-2 * Math.PI * 300) / 16000);
  const swellHz = 0.2 + 0.2 * random();
  const phase = 2 * Math.PI * random();
  let low1 = 0;
  let low2 = 0;
  for (let i = 0; i < length; i++) {
    low1 = a * low1 + (1 - a) * gaussian(random);
    low2 = a * low2 + (1 - a) * low1;
    const swell = 1 + 0.6 * Math.sin((2 * Math.PI * swellHz * i) / 16000 + phase);
    noise[i] = swell * 20 * low2 + 0.05 * gaussian(random);
  }
  return noise;
}

/** Up to BABBLE_TALKERS talkers, each at the same level, each looped from a seeded offset, summed. */
function babble(length: number, talkers: readonly Int16Array[] | undefined, random: () => number): Float64Array {
  const usable = (talkers ?? []).filter((t) => t.some((s) => s !== 0));
  if (usable.length === 0) throw new Error('babble noise needs talkers: pass { talkers: await babbleTalkers(voiceIds) }');
  const noise = new Float64Array(length);
  const count = Math.min(BABBLE_TALKERS, usable.length);
  const start = Math.floor(random() * usable.length);
  for (let k = 0; k < count; k++) {
    const talker = usable[(start + k) % usable.length]!;
    const level = 1 / Math.sqrt(maskedPower(talker, speechActivity(talker)));
    const offset = Math.floor(random() * talker.length);
    for (let i = 0; i < length; i++) noise[i] = noise[i]! + level * talker[(offset + i) % talker.length]!;
  }
  return noise;
}

function meanSquare(samples: Int16Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! * samples[i]!;
  return to > from ? sum / (to - from) : 0;
}
