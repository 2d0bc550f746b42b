/**
 * A small deterministic generator of numbers in [0, 1): the same sequence for the same seed on
 * every run, so a test's random cases are the same cases each time (a linear congruential
 * generator; not for anything but test inputs).
 */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** One of `values`, chosen by `random`. */
export function pickWith(random: () => number): <T>(values: readonly T[]) => T {
  return (values) => values[Math.floor(random() * values.length)]!;
}
