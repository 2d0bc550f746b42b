/**
 * ITU-T G.711 mu-law (PCMU) <-> PCM16, bit-exact with the ITU-T G.191 reference
 * (`ulaw_compress`/`ulaw_expand`). Negative samples take the one's complement before
 * quantising, as the reference does (the older Sun `linear2ulaw` negates instead and differs
 * by one code for some negative inputs).
 *
 * Both directions are table lookups: mu-law only looks at the top 14 bits of a sample, so
 * the encoder indexes a 16 KiB table by `sample >> 2`, built once from the reference rule.
 */

const DECODE = new Int16Array(256);
const ENCODE = new Uint8Array(1 << 14);

for (let code = 0; code < 256; code++) {
  const inverted = ~code & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const step = 4 << (exponent + 1);
  const magnitude = (0x80 << exponent) + step * mantissa + step / 2 - 4 * 33;
  DECODE[code] = code < 0x80 ? -magnitude : magnitude;
}

for (let index = 0; index < ENCODE.length; index++) {
  const top14 = index - (1 << 13);
  // 33 is the bias that makes the segments line up (G.191); 0x1fff is the 13-bit ceiling.
  const biased = Math.min((top14 < 0 ? ~top14 : top14) + 33, 0x1fff);
  let segment = 1;
  for (let rest = biased >> 6; rest !== 0; rest >>= 1) segment++;
  const code = ((8 - segment) << 4) | (0x0f - ((biased >> segment) & 0x0f));
  ENCODE[index] = top14 >= 0 ? code | 0x80 : code;
}

/** Encodes PCM16 samples to mu-law bytes (one byte per sample). */
export function encodeMulaw(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = ENCODE[(samples[i]! >> 2) + 8192]!;
  return out;
}

/** Decodes mu-law bytes to PCM16 samples. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = DECODE[bytes[i]!]!;
  return out;
}
