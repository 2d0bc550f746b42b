import os from "node:os";

/**
 * PCM16 helpers: little-endian bytes <-> Int16Array, float conversion, levels and mixing.
 * Wire formats (WAV, L16 over WebSocket, RTP payloads after decoding) are little-endian; on a
 * little-endian host with an even byte offset the conversions share memory instead of copying.
 */

const HOST_IS_LITTLE_ENDIAN = os.endianness() === "LE";

/**
 * Views little-endian PCM16 bytes as samples. Shares memory with `bytes` when the offset is
 * even (mutating one mutates the other); copies otherwise. Throws on an odd byte count.
 */
export function bytesToPcm16(bytes: Uint8Array): Int16Array {
  if (bytes.byteLength % 2 !== 0) throw new RangeError(`PCM16 needs an even number of bytes, got ${bytes.byteLength}`);
  const count = bytes.byteLength / 2;
  if (HOST_IS_LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Little-endian bytes of `samples`, as a Buffer that shares memory with them (copies on big-endian hosts). */
export function pcm16ToBytes(samples: Int16Array): Buffer {
  if (HOST_IS_LITTLE_ENDIAN) return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const out = Buffer.alloc(samples.byteLength);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

/** Samples as floats in [-1, 1). */
export function pcm16ToFloat32(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i]! / 32768;
  return out;
}

/** Floats in [-1, 1] to PCM16, rounded and clipped. */
export function float32ToPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = clampToInt16(Math.round(samples[i]! * 32768));
  return out;
}

/** Root mean square of the samples, relative to full scale (0 for silence, 1 for a full-scale square wave). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / samples.length) / 32768;
}

/**
 * Level in dBFS, referenced to a full-scale square wave (so a full-scale sine reads -3.01).
 * Digital silence is -Infinity.
 */
export function dbfs(samples: Int16Array): number {
  return 20 * Math.log10(rms(samples));
}

/**
 * Sums two streams sample by sample, clipping to the PCM16 range. The result is as long as
 * the longer input; the shorter one counts as silence past its end.
 */
export function mixPcm16(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(Math.max(a.length, b.length));
  for (let i = 0; i < out.length; i++) out[i] = clampToInt16((a[i] ?? 0) + (b[i] ?? 0));
  return out;
}

/** Saturates an integer to the PCM16 range (typed arrays would wrap it around instead). */
export function clampToInt16(value: number): number {
  return value > 32767 ? 32767 : value < -32768 ? -32768 : value;
}
