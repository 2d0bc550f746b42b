// A streaming windowed-sinc resampler for mono float audio, shared by the capture and
// playback worklets (and usable on the main thread). Downsampling low-passes below the new
// Nyquist frequency first, so 44.1/48 kHz microphone audio reaches 16 kHz without aliasing.

const PHASES = 256;

function sinc(x) {
  return x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
}

/** Blackman window over [-1, 1]. */
function blackman(t) {
  const u = (t + 1) / 2;
  return 0.42 - 0.5 * Math.cos(2 * Math.PI * u) + 0.08 * Math.cos(4 * Math.PI * u);
}

export class Resampler {
  /** `zeroCrossings`: sinc lobes kept on each side (quality against cost). */
  constructor(inputRate, outputRate, zeroCrossings = 8) {
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    this.step = inputRate / outputRate;
    this.passthrough = inputRate === outputRate;
    const scale = Math.min(1, outputRate / inputRate);
    const cutoff = 0.5 * scale * 0.92; // cycles per input sample, a little under the lower Nyquist
    this.half = Math.ceil(zeroCrossings / (2 * cutoff)) ;
    const taps = 2 * this.half;
    // table[p][j]: the weight of input sample (i - half + 1 + j) for an output at i + p / PHASES.
    this.table = [];
    for (let p = 0; p <= PHASES; p++) {
      const frac = p / PHASES;
      const row = new Float32Array(taps);
      let sum = 0;
      for (let j = 0; j < taps; j++) {
        const d = frac + this.half - 1 - j; // distance from the output position to the input sample
        const w = Math.abs(d) >= this.half ? 0 : 2 * cutoff * sinc(2 * cutoff * d) * blackman(d / this.half);
        row[j] = w;
        sum += w;
      }
      for (let j = 0; j < taps; j++) row[j] /= sum; // unity gain at DC
      this.table.push(row);
    }
    this.reset();
  }

  /** Forgets the audio so far (after a `clear`). */
  reset() {
    this.buffer = new Float32Array(4096);
    this.length = this.half - 1; // history: zeros before the first sample
    this.buffer.fill(0, 0, this.length);
    this.position = this.half - 1;
  }

  /** Resamples the next block; returns the output samples it completes (a new array). */
  process(input) {
    if (this.passthrough) return Float32Array.from(input);
    if (this.length + input.length > this.buffer.length) {
      const bigger = new Float32Array(Math.max(this.buffer.length * 2, this.length + input.length));
      bigger.set(this.buffer.subarray(0, this.length));
      this.buffer = bigger;
    }
    this.buffer.set(input, this.length);
    this.length += input.length;
    const available = Math.max(0, Math.ceil((this.length - this.half - this.position) / this.step));
    const output = new Float32Array(available);
    let n = 0;
    const taps = 2 * this.half;
    while (n < available) {
      const i = Math.floor(this.position);
      if (i + this.half >= this.length) break;
      const row = this.table[Math.round((this.position - i) * PHASES)];
      const start = i - this.half + 1;
      let acc = 0;
      for (let j = 0; j < taps; j++) acc += this.buffer[start + j] * row[j];
      output[n++] = acc;
      this.position += this.step;
    }
    // Keep only what the next outputs still need.
    const drop = Math.max(0, Math.floor(this.position) - this.half + 1);
    if (drop > 0) {
      this.buffer.copyWithin(0, drop, this.length);
      this.length -= drop;
      this.position -= drop;
    }
    return n === available ? output : output.subarray(0, n);
  }
}
