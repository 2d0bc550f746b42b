/**
 * Test-only telephony channel, written here so the guard test does not depend on the
 * engine's own resampler or codec: 16 kHz speech to 8 kHz G.711 mu-law and back, and the
 * sharp band-limited upsampler the guard compares the ASR's linear upsampler against.
 */

/** Windowed-sinc (Blackman) low-pass FIR with unity DC gain; `cutoff` in Hz at `rate`. */
function lowPass(cutoff: number, rate: number, taps: number): Float64Array {
  const kernel = new Float64Array(taps);
  const middle = (taps - 1) / 2;
  const fc = cutoff / rate;
  let sum = 0;
  for (let i = 0; i < taps; i++) {
    const x = i - middle;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const window = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (taps - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (taps - 1));
    kernel[i] = sinc * window;
    sum += kernel[i]!;
  }
  return kernel.map((value) => value / sum);
}

const TAPS = 129;

function clamp(value: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(value)));
}

/** 16 kHz -> 8 kHz: low-pass at 3.6 kHz (the telephone band), then keep every other sample. */
export function downsampleTo8k(samples: Int16Array): Int16Array {
  const kernel = lowPass(3600, 16000, TAPS);
  const middle = (TAPS - 1) / 2;
  const output = new Int16Array(Math.floor(samples.length / 2));
  for (let n = 0; n < output.length; n++) {
    let sum = 0;
    for (let k = 0; k < TAPS; k++) {
      const i = 2 * n + middle - k;
      if (i >= 0 && i < samples.length) sum += kernel[k]! * samples[i]!;
    }
    output[n] = clamp(sum);
  }
  return output;
}

/** 8 kHz -> 16 kHz the "high-quality" way: zero-stuffing and a sharp 3.9 kHz low-pass, so nothing is left above 4 kHz. */
export function sharpUpsampleTo16k(samples: Int16Array): Int16Array {
  const kernel = lowPass(3900, 16000, TAPS);
  const middle = (TAPS - 1) / 2;
  const output = new Int16Array(samples.length * 2);
  for (let n = 0; n < output.length; n++) {
    let sum = 0;
    for (let k = 0; k < TAPS; k++) {
      const j = n + middle - k;
      if (j >= 0 && j % 2 === 0 && j / 2 < samples.length) sum += kernel[k]! * samples[j / 2]!;
    }
    // Times 2: zero-stuffing halves the level.
    output[n] = clamp(2 * sum);
  }
  return output;
}

/** G.711 mu-law encoding of one sample (the classic Sun/CCITT rule with bias 0x84). */
function muLawEncode(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  const biased = Math.min(Math.abs(sample), 32635) + 0x84;
  let exponent = 7;
  for (let mask = 0x4000; (biased & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (biased >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function muLawDecode(code: number): number {
  const inverted = ~code & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const magnitude = ((((inverted & 0x0f) << 3) + 0x84) << exponent) - 0x84;
  return inverted & 0x80 ? -magnitude : magnitude;
}

/** What survives a G.711 mu-law telephone line: each sample encoded to 8 bits and decoded. */
export function throughMuLaw(samples: Int16Array): Int16Array {
  return Int16Array.from(samples, (sample) => muLawDecode(muLawEncode(sample)));
}
