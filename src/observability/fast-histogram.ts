import type { Metric } from "prom-client";

/** One line of the exposition, as a prom-client registry reads it from a metric's `get()`. */
interface ExposedValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** One label set's counts: per bucket (not cumulative; the last slot is above every bound), sum and count. */
interface Series {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram for the per-request hot path. prom-client's `histogram.labels(...).observe(v)`
 * validates and hashes the label values on every call (about a microsecond); here a series is
 * found by one Map lookup on a key the caller builds, and an observation is a bucket search and
 * three additions, allocating nothing. It registers in a prom-client Registry like any metric (the registry only
 * asks a metric for `name`, `get()` and `reset()`) and is exposed in the same text format.
 */
export class FastHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, Series>();

  constructor(config: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[] }) {
    this.name = config.name;
    this.help = config.help;
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** Records `value` under the series named `key`; false (nothing recorded) when there is no such series yet: `add` it. */
  observe(key: string, value: number): boolean {
    const s = this.series.get(key);
    if (!s) return false;
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    s.buckets[i]!++;
    s.sum += value;
    s.count++;
    return true;
  }

  /** Starts the series `key` (the caller's key must stand for these label values one to one). */
  add(key: string, labels: Record<L, string>): void {
    if (!this.series.has(key)) this.series.set(key, { labels, buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 });
  }

  /** The exposition's values, in prom-client's shape (cumulative `_bucket`s with `le`, then `_sum` and `_count`). */
  async get(): Promise<{ name: string; help: string; type: "histogram"; aggregator: "sum"; values: ExposedValue[] }> {
    const values: ExposedValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...s.labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: "histogram", aggregator: "sum", values };
  }

  reset(): void {
    this.series.clear();
  }

  /** As a prom-client Metric, for `registry.registerMetric`. */
  asMetric(): Metric<string> {
    return this as unknown as Metric<string>;
  }
}
