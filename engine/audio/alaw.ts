/**
 * ITU-T G.711 A-law (PCMA) <-> PCM16, bit-exact with the ITU-T G.191 reference
 * (`alaw_compress`/`alaw_expand`, which the Sun `g711.c` matches for A-law).
 *
 * Both directions are table lookups: A-law only looks at the top 12 bits of a sample, so the
 * encoder indexes a 4 KiB table by `sample >> 4`, built once from the reference rule.
 */

const DECODE = new Int16Array(256);
const ENCODE = new Uint8Array(1 << 12);

for (let code = 0; code < 256; code++) {
  const toggled = (code ^ 0x55) & 0x7f;
  const exponent = toggled >> 4;
  let mantissa = toggled & 0x0f;
  if (exponent > 0) mantissa += 16;
  mantissa = (mantissa << 4) + 8;
  if (exponent > 1) mantissa <<= exponent - 1;
  DECODE[code] = code > 0x7f ? mantissa : -mantissa;
}

for (let index = 0; index < ENCODE.length; index++) {
  const top12 = index - (1 << 11);
  let value = top12 < 0 ? ~top12 : top12;
  if (value > 15) {
    let exponent = 1;
    while (value > 16 + 15) {
      value >>= 1;
      exponent++;
    }
    value = value - 16 + (exponent << 4);
  }
  // Sign bit set means positive; even bits are toggled on the line.
  ENCODE[index] = (top12 >= 0 ? value | 0x80 : value) ^ 0x55;
}

/** Encodes PCM16 samples to A-law bytes (one byte per sample). */
export function encodeAlaw(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = ENCODE[(samples[i]! >> 4) + 2048]!;
  return out;
}

/** Decodes A-law bytes to PCM16 samples. */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = DECODE[bytes[i]!]!;
  return out;
}
