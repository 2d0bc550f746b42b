import os from "node:os";

/**
 * Calls one core carries by default. With the embedded recognizer the box decodes every
 * caller's speech itself (a third of a core per second of telephony speech, callers speaking
 * about a third of the time) next to VAD, TTS and playout: 6 per core. With a remote recognizer
 * a call costs the box its media timing, VAD and playout only: 150 per core. Both are what
 * `npm run bench -- --find-capacity` measured on a 2-core machine (docs/benchmark.md); a box
 * that measures otherwise sets `PARLEY_CALL_CAPACITY`.
 */
export const CALLS_PER_CORE = { embeddedAsr: 6, remoteAsr: 150 } as const;

/** The calls a machine with `cores` carries at once by default (see CALLS_PER_CORE). */
export function defaultCallCapacity(remoteAsr: boolean, cores: number = os.availableParallelism()): number {
  return Math.max(1, cores * (remoteAsr ? CALLS_PER_CORE.remoteAsr : CALLS_PER_CORE.embeddedAsr));
}
