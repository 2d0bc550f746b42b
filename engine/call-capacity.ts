import os from "node:os";

/**
 * Calls one core carries by default, from `npm run bench -- --find-capacity` on a 2-core box
 * (docs/benchmark.md, 2026-11-28). With a remote recognizer a call costs about 1% of a core
 * (media timing, VAD, playout): 75 calls held the latency bounds, 100 did not: 35 per core.
 * With the embedded recognizer a call costs 5-8% of a core on average, but decoding costs a
 * third of a core per second of speech while the caller speaks: 12 calls ran at 65% CPU with
 * turns answered in ~0.7 s (p50), and only callers all speaking at once waited (up to 6 s for
 * 12 at once): 6 per core, every caller answered. A box that measures otherwise sets
 * `PARLEY_CALL_CAPACITY`.
 */
export const CALLS_PER_CORE = { embeddedAsr: 6, remoteAsr: 35 } as const;

/** The calls a machine with `cores` carries at once by default (see CALLS_PER_CORE). */
export function defaultCallCapacity(remoteAsr: boolean, cores: number = os.availableParallelism()): number {
  return Math.max(1, cores * (remoteAsr ? CALLS_PER_CORE.remoteAsr : CALLS_PER_CORE.embeddedAsr));
}
