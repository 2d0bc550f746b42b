/**
 * Synthetic, deterministic "speech" for stand-in servers: voiced sound a VAD hears as speech,
 * without a speech model. A source-filter vowel synthesizer: a harmonic source (fundamental
 * 120-180 Hz, falling within each syllable) shaped by three vowel formants, in syllables of
 * 250 ms (the ~4 Hz rhythm of running speech) with short gaps between them.
 */

const SYLLABLE_MS = 250;
/** Share of each syllable that is voiced; the rest is the gap before the next. */
const VOICED_SHARE = 0.82;
/** Syllables in the loop every answer is cut from. */
const LOOP_SYLLABLES = 16;
/** Peak sample: a moderate speaking level (about -12 dBFS). */
const PEAK = 8000;
/** Faded out at the end so a cut mid-syllable does not click. */
const FADE_OUT_MS = 5;
/** Formants F1-F3 (Hz) of /a/, /i/, /u/, /e/, /o/ (adult male averages). */
const VOWEL_FORMANTS: readonly (readonly [number, number, number])[] = [
  [730, 1090, 2440],
  [270, 2290, 3010],
  [300, 870, 2240],
  [530, 1840, 2480],
  [570, 840, 2410],
];
const FORMANT_BANDWIDTHS = [90, 110, 170] as const;

/** The loop, built once per sample rate (a few tens of ms), so answers cost only a copy. */
const loops = new Map<number, Int16Array>();

/**
 * `sampleCount` samples of voiced speech at `sampleRate`. The same `key` (say, the text spoken)
 * always gives the same samples; different keys start at different syllables.
 */
export function voicedSpeech(key: string, sampleCount: number, sampleRate: number): Int16Array {
  const loop = speechLoop(sampleRate);
  const syllable = Math.round((sampleRate * SYLLABLE_MS) / 1000);
  const out = new Int16Array(sampleCount);
  // Starting on a syllable boundary starts in the silent gap: no click.
  let at = (fnv1a(key) % LOOP_SYLLABLES) * syllable;
  for (let written = 0; written < sampleCount; ) {
    const take = Math.min(sampleCount - written, loop.length - at);
    out.set(loop.subarray(at, at + take), written);
    written += take;
    at = 0;
  }
  const fade = Math.min(sampleCount, Math.round((sampleRate * FADE_OUT_MS) / 1000));
  for (let i = 0; i < fade; i++) {
    const index = sampleCount - 1 - i;
    out[index] = Math.round((out[index]! * i) / fade);
  }
  return out;
}

function speechLoop(sampleRate: number): Int16Array {
  const cached = loops.get(sampleRate);
  if (cached) return cached;
  const syllable = Math.round((sampleRate * SYLLABLE_MS) / 1000);
  const signal = new Float64Array(syllable * LOOP_SYLLABLES);
  const highestHz = Math.min(5000, sampleRate * 0.45);
  let phase = 0;
  for (let s = 0; s < LOOP_SYLLABLES; s++) {
    const baseF0 = 120 + (60 * ((s * 7) % 11)) / 10;
    const formants = VOWEL_FORMANTS[(s * 3) % VOWEL_FORMANTS.length]!;
    for (let i = 0; i < syllable; i++) {
      const u = i / syllable;
      // Pitch falls through the syllable, as in a declarative stress group.
      const f0 = baseF0 * (1.06 - 0.12 * u);
      phase = (phase + f0 / sampleRate) % 1;
      if (u >= VOICED_SHARE) continue;
      const envelope = Math.sin((Math.PI * u) / VOICED_SHARE) ** 0.6;
      let value = 0;
      for (let k = 1; k * f0 < highestHz; k++) value += harmonicGain(k, k * f0, formants) * Math.sin(2 * Math.PI * k * phase);
      signal[s * syllable + i] = envelope * value;
    }
  }
  let peak = 0;
  for (const value of signal) peak = Math.max(peak, Math.abs(value));
  const loop = new Int16Array(signal.length);
  for (let i = 0; i < signal.length; i++) loop[i] = Math.round((signal[i]! * PEAK) / peak);
  loops.set(sampleRate, loop);
  return loop;
}

/** Source (falling 6 dB per octave) times a cascade of second-order formant resonances. */
function harmonicGain(k: number, hz: number, formants: readonly [number, number, number]): number {
  let gain = 1 / k;
  for (let j = 0; j < formants.length; j++) {
    const f = formants[j]!;
    const ratio = hz / f;
    gain /= Math.hypot(1 - ratio * ratio, (hz * FORMANT_BANDWIDTHS[j]!) / (f * f));
  }
  return gain;
}

/** FNV-1a over UTF-16 code units: a stable hash across runs and platforms. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}
