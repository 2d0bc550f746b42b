export interface Summary {
  n: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  min: number | null;
  max: number | null;
  mean: number | null;
}

/** Nearest-rank percentiles: every reported value is a measured sample. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => (sorted.length === 0 ? null : round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!));
  return {
    n: sorted.length,
    p50: rank(50),
    p95: rank(95),
    p99: rank(99),
    min: sorted.length ? round(sorted[0]!) : null,
    max: sorted.length ? round(sorted[sorted.length - 1]!) : null,
    mean: sorted.length ? round(sorted.reduce((a, b) => a + b, 0) / sorted.length) : null,
  };
}

export function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
