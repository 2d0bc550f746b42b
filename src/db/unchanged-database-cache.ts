import type { DatabaseGeneration } from "./database-generation.js";

/**
 * Results of reads, kept only while the database is unchanged: at the first lookup after any
 * write (by this process or another) everything is dropped and read again. So a hit returns
 * exactly what the read would return now. Results are frozen (shared between callers); reads
 * that find nothing (undefined) are not kept, so unknown keys cannot fill it.
 */
export class UnchangedDatabaseCache<K, V extends object> {
  private generation: string | undefined;
  private readonly entries = new Map<K, V>();

  constructor(
    private readonly currentGeneration: DatabaseGeneration,
    private readonly maxEntries: number,
  ) {}

  /** The kept result for `key`, or `read()`'s, kept when the database did not change meanwhile. */
  async get(key: K, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const before = this.currentGeneration();
    if (before !== this.generation) {
      this.entries.clear();
      this.generation = before;
    }
    const kept = this.entries.get(key);
    if (kept) return kept;
    const value = await read();
    // Another caller may have seen a newer generation meanwhile: then this read may be stale for it.
    if (value !== undefined && this.generation === before && this.entries.size < this.maxEntries) this.entries.set(key, deepFreeze(value));
    return value;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
