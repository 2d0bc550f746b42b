/** Test signals and measurements for audio tests. */

export function sine(frequency: number, sampleRate: number, count: number, amplitude = 10000, phase = 0): Int16Array {
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate + phase));
  return out;
}

/** Deterministic pseudo-random noise (xorshift), full band. */
export function noise(count: number, amplitude = 8000, seed = 12345): Int16Array {
  const out = new Int16Array(count);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    out[i] = Math.round(((state / 0xffffffff) * 2 - 1) * amplitude);
  }
  return out;
}

export interface ToneFit {
  /** Amplitude of the best-fitting sinusoid at the frequency. */
  amplitude: number;
  /** Energy left after subtracting that sinusoid, relative to its energy, in dB. */
  residualDb: number;
}

/** Least-squares fit of one sinusoid of known frequency over samples [from, to). */
export function fitTone(samples: Int16Array, frequency: number, sampleRate: number, from = 0, to = samples.length): ToneFit {
  let ss = 0;
  let sc = 0;
  let cc = 0;
  let xs = 0;
  let xc = 0;
  for (let i = from; i < to; i++) {
    const w = (2 * Math.PI * frequency * i) / sampleRate;
    const s = Math.sin(w);
    const c = Math.cos(w);
    ss += s * s;
    sc += s * c;
    cc += c * c;
    xs += samples[i]! * s;
    xc += samples[i]! * c;
  }
  const det = ss * cc - sc * sc;
  const a = (xs * cc - xc * sc) / det;
  const b = (xc * ss - xs * sc) / det;
  let residual = 0;
  let fitted = 0;
  for (let i = from; i < to; i++) {
    const w = (2 * Math.PI * frequency * i) / sampleRate;
    const model = a * Math.sin(w) + b * Math.cos(w);
    fitted += model * model;
    residual += (samples[i]! - model) ** 2;
  }
  return { amplitude: Math.hypot(a, b), residualDb: 10 * Math.log10(residual / fitted) };
}

/** RMS of samples [from, to). */
export function rmsOf(samples: Int16Array, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / Math.max(1, to - from));
}

/** Normalised correlation of a[i] with b[i + lag] over the overlap. */
export function correlation(a: Int16Array, b: Int16Array, lag: number): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = Math.max(0, -lag); i < a.length && i + lag < b.length; i++) {
    const x = a[i]!;
    const y = b[i + lag]!;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
}

/** The lag in [0, maxLag] at which b best matches a, and the correlation there. */
export function bestLag(a: Int16Array, b: Int16Array, maxLag: number): { lag: number; correlation: number } {
  let best = { lag: 0, correlation: -Infinity };
  for (let lag = 0; lag <= maxLag; lag++) {
    const c = correlation(a, b, lag);
    if (c > best.correlation) best = { lag, correlation: c };
  }
  return best;
}

export function concat(chunks: Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
