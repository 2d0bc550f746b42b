import { clampToInt16 } from "./pcm16.js";

/**
 * High-quality streaming sample-rate conversion: a polyphase windowed-sinc (Kaiser) filter
 * for any rational ratio between integer rates (the engine uses 8, 16, 24 and 48 kHz).
 *
 * Filter: linear phase, flat (< 0.1 dB) to 0.85 and attenuating >= 90 dB from 1.0 of the
 * lower rate's Nyquist frequency (3.4 kHz and 4 kHz for 8 kHz), so nothing above it aliases
 * (downsampling) or leaves images (upsampling). Its group delay is compensated: output sample n sits at exactly input time
 * n * inputRate / outputRate, so resampled audio stays on the same timeline as its source
 * (the recorder relies on this). The price is latency: output for time t needs input up to
 * t + `latencyMs` (5 ms when one side is 8 kHz, 2.5 ms at 16 kHz), so a stream ends with
 * `flush()`, which drains the held-back tail.
 *
 * Output depends only on the input samples, never on how they were split into chunks:
 * chunked and one-shot conversion give identical samples. Not for the embedded ASR's
 * upsampler, which deliberately keeps images (see DESIGN.md).
 */

export interface ResamplerOptions {
  inputRate: number;
  outputRate: number;
}

/** Filter half-length in samples of the lower rate: sets the transition width (about 0.145 of Nyquist). */
const HALF_WIDTH_AT_LOWER_RATE = 40;
const STOPBAND_DB = 90;
/** The -6 dB point, as a fraction of the lower rate's Nyquist frequency: the middle of the transition band. */
const CUTOFF = 0.9275;
/** Polyphase tables grow with the reduced numerator of the ratio; refuse absurd ratios. */
const MAX_PHASES = 1024;

interface PolyphaseFilter {
  /** Interpolation factor and decimation factor of the reduced ratio outputRate/inputRate = up/down. */
  up: number;
  down: number;
  /** Input samples the filter reaches on each side of an output instant (rounded up). */
  reach: number;
  /** Coefficients per phase: 2 * reach. */
  taps: number;
  /** `up` phases of `taps` coefficients each; each phase sums to 1 (exact DC gain). */
  coefficients: Float64Array;
}

const filters = new Map<string, PolyphaseFilter>();

export class Resampler {
  readonly inputRate: number;
  readonly outputRate: number;
  /** Input, in ms, that must arrive before the output for a given instant can be produced. */
  readonly latencyMs: number;
  private readonly filter: PolyphaseFilter | undefined;
  /** Input history; index 0 holds absolute input sample `bufferStart` (negative: leading zeros). */
  private buffer = new Float32Array(0);
  private bufferLength = 0;
  private bufferStart = 0;
  private inputCount = 0;
  private outputCount = 0;
  /** Position of the next output instant: input sample `baseIndex` plus `phase / up`. */
  private baseIndex = 0;
  private phase = 0;

  constructor(options: ResamplerOptions) {
    const { inputRate, outputRate } = options;
    for (const rate of [inputRate, outputRate]) {
      if (!Number.isInteger(rate) || rate <= 0) throw new RangeError(`sample rate must be a positive integer, got ${rate}`);
    }
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    this.filter = inputRate === outputRate ? undefined : polyphaseFilter(inputRate, outputRate);
    this.latencyMs = this.filter ? (this.filter.reach * 1000) / inputRate : 0;
    this.reset();
  }

  /** Converts the next chunk of the stream; returns the output that is complete so far. */
  push(samples: Int16Array): Int16Array {
    const filter = this.filter;
    if (!filter) return samples.slice();
    this.append(samples, samples.length);
    this.inputCount += samples.length;
    return this.produce(filter, Number.POSITIVE_INFINITY);
  }

  /** Ends the stream: returns the held-back tail (as if followed by silence) and resets. */
  flush(): Int16Array {
    const filter = this.filter;
    if (!filter) return new Int16Array(0);
    this.append(new Int16Array(filter.reach), filter.reach);
    const total = Math.ceil((this.inputCount * filter.up) / filter.down);
    const out = this.produce(filter, total - this.outputCount);
    this.reset();
    return out;
  }

  /** Forgets the stream (for example after a barge-in) without producing anything. */
  reset(): void {
    const reach = this.filter?.reach ?? 0;
    // Leading zeros stand for the silence before the stream so the first outputs have history.
    this.bufferLength = Math.max(reach - 1, 0);
    this.buffer = new Float32Array(Math.max(this.bufferLength, 1024));
    this.bufferStart = -this.bufferLength;
    this.inputCount = 0;
    this.outputCount = 0;
    this.baseIndex = 0;
    this.phase = 0;
  }

  private append(samples: Int16Array, count: number): void {
    if (this.bufferLength + count > this.buffer.length) {
      const grown = new Float32Array(Math.max(this.buffer.length * 2, this.bufferLength + count));
      grown.set(this.buffer.subarray(0, this.bufferLength));
      this.buffer = grown;
    }
    this.buffer.set(samples.subarray(0, count), this.bufferLength);
    this.bufferLength += count;
  }

  private produce(filter: PolyphaseFilter, limit: number): Int16Array {
    const { up, down, taps, reach, coefficients } = filter;
    const available = this.bufferStart + this.bufferLength;
    // Output at baseIndex needs input up to baseIndex + reach.
    let count = 0;
    if (this.baseIndex + reach < available) {
      // Outputs whose base index stays within `reachable` of the current one have their input.
      const reachable = available - reach - 1 - this.baseIndex;
      const span = (reachable + 1) * up - 1 - this.phase;
      count = Math.min(Math.floor(span / down) + 1, limit);
    }
    const out = new Int16Array(count);
    const buffer = this.buffer;
    const firstOffset = 1 - reach - this.bufferStart;
    let baseIndex = this.baseIndex;
    let phase = this.phase;
    for (let n = 0; n < count; n++) {
      const first = baseIndex + firstOffset;
      const offset = phase * taps;
      // Four partial sums (taps is even, a multiple of 4 at the engine's rates) let the CPU overlap the multiplies.
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let k = 0;
      for (; k + 3 < taps; k += 4) {
        s0 += coefficients[offset + k]! * buffer[first + k]!;
        s1 += coefficients[offset + k + 1]! * buffer[first + k + 1]!;
        s2 += coefficients[offset + k + 2]! * buffer[first + k + 2]!;
        s3 += coefficients[offset + k + 3]! * buffer[first + k + 3]!;
      }
      for (; k < taps; k++) s0 += coefficients[offset + k]! * buffer[first + k]!;
      out[n] = clampToInt16(Math.round(s0 + s1 + s2 + s3));
      phase += down;
      baseIndex += Math.floor(phase / up);
      phase %= up;
    }
    this.baseIndex = baseIndex;
    this.phase = phase;
    this.outputCount += count;
    this.discardBefore(baseIndex - reach + 1);
    return out;
  }

  private discardBefore(absoluteIndex: number): void {
    const drop = absoluteIndex - this.bufferStart;
    if (drop <= 0) return;
    this.buffer.copyWithin(0, drop, this.bufferLength);
    this.bufferLength -= drop;
    this.bufferStart = absoluteIndex;
  }
}

function polyphaseFilter(inputRate: number, outputRate: number): PolyphaseFilter {
  const key = `${inputRate}:${outputRate}`;
  const cached = filters.get(key);
  if (cached) return cached;
  const divisor = gcd(inputRate, outputRate);
  const up = outputRate / divisor;
  const down = inputRate / divisor;
  if (up > MAX_PHASES) throw new RangeError(`unsupported resampling ratio ${inputRate} -> ${outputRate} Hz`);
  // Work in units of input samples: the filter's half-width and cutoff follow the lower rate.
  const stretch = Math.max(1, inputRate / outputRate);
  const halfWidth = HALF_WIDTH_AT_LOWER_RATE * stretch;
  const cutoff = (0.5 * CUTOFF) / stretch;
  const reach = Math.ceil(halfWidth);
  const taps = 2 * reach;
  const beta = 0.1102 * (STOPBAND_DB - 8.7);
  const coefficients = new Float64Array(up * taps);
  for (let phase = 0; phase < up; phase++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      // Distance from the output instant to input sample (baseIndex - reach + 1 + k).
      const distance = phase / up + reach - 1 - k;
      const value = Math.abs(distance) >= halfWidth ? 0 : 2 * cutoff * sinc(2 * cutoff * distance) * kaiser(distance / halfWidth, beta);
      coefficients[phase * taps + k] = value;
      sum += value;
    }
    for (let k = 0; k < taps; k++) coefficients[phase * taps + k]! /= sum;
  }
  const filter = { up, down, taps, reach, coefficients };
  filters.set(key, filter);
  return filter;
}

function sinc(x: number): number {
  return x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
}

function kaiser(x: number, beta: number): number {
  return besselI0(beta * Math.sqrt(1 - x * x)) / besselI0(beta);
}

/** Zeroth-order modified Bessel function of the first kind (power series). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const quarterSquare = (x * x) / 4;
  for (let k = 1; term > sum * 1e-17; k++) {
    term *= quarterSquare / (k * k);
    sum += term;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
