import { rms } from "../../engine/index.js";

/** The loudness (RMS, 0 to 1) of the loudest 100 ms in `pcm` at `rate`, stepping 50 ms: whether anything was said. */
export function loudest(pcm: Int16Array, rate = 16000): number {
  const window = rate / 10;
  let max = 0;
  for (let i = 0; i + window <= pcm.length; i += window / 2) max = Math.max(max, rms(pcm.subarray(i, i + window)));
  return max;
}
