import type { Logger } from "pino";
import { pino } from "pino";
import { LogThrottle } from "../core/log-throttle.js";
import { STORAGE_TARGETS, type StorageTarget } from "../core/storage-target.js";
import type { DatabaseWriteObserver } from "../db/write-observer.js";


/** A failure counts against readiness this long at most (unless a write of its kind succeeds first). */
export const STORAGE_FAILURE_WINDOW_MS = 60_000;
/**
 * Database failures are logged one line per this interval at most (a full disk fails every
 * write: a flood); the lines held back are counted in the next. Recording failures are one per
 * call at most: each is logged, with its call.
 */
const LOG_INTERVAL_MS: Record<StorageTarget, number> = { recording: 0, database: 10_000 };

export interface StorageFailure {
  target: StorageTarget;
  /** ISO 8601. */
  at: string;
  /** The system's or SQLite's code (ENOSPC, EFBIG, SQLITE_FULL, ...); null when the error had none. */
  code: string | null;
  message: string;
}

interface TargetState {
  failures: number;
  last: StorageFailure | null;
  lastAtMs: number;
  /** A write of this kind has succeeded since `last`. */
  recovered: boolean;
  log: LogThrottle;
}

/**
 * Counts the writes that failed because of the disk (full, or failing), by target, and says
 * whether the service is short of storage now: a target is failing from a failure until a
 * write of the same kind succeeds again, or STORAGE_FAILURE_WINDOW_MS after its last failure
 * (an idle service cannot prove the disk is fine by writing, and must not stay unready for
 * ever; if the disk is still full, the next write fails and it is failing again).
 * `/readyz` answers 503 while any target is failing; metrics read `counts()`.
 */
export class StorageHealth {
  private readonly targets: Record<StorageTarget, TargetState>;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly windowMs: number;

  constructor(options: { logger?: Logger; now?: () => number; windowMs?: number } = {}) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? pino({ level: "silent" });
    this.windowMs = options.windowMs ?? STORAGE_FAILURE_WINDOW_MS;
    const state = (target: StorageTarget): TargetState => ({ failures: 0, last: null, lastAtMs: 0, recovered: true, log: new LogThrottle(LOG_INTERVAL_MS[target], this.now) });
    this.targets = { recording: state("recording"), database: state("database") };
  }

  /** A write to `target` failed because of the disk: counted, remembered, logged (see LOG_INTERVAL_MS). */
  failed(target: StorageTarget, err: { message: string; code?: unknown }, context: Record<string, unknown> = {}): void {
    const state = this.targets[target];
    const nowMs = this.now();
    const code = typeof err.code === "string" ? err.code : null;
    state.failures += 1;
    state.last = { target, at: new Date(nowMs).toISOString(), code, message: err.message };
    state.lastAtMs = nowMs;
    state.recovered = false;
    const held = state.log.take();
    if (held === undefined) return;
    this.logger.error({ ...context, storage: target, code, error: err.message, failures: state.failures, ...(held > 0 ? { held_back: held } : {}) }, `storage write failed: ${target} (${code ?? "error"})`);
  }

  /** A write to `target` reached the disk: the target is healthy again (logged once when it was failing). */
  succeeded(target: StorageTarget): void {
    const state = this.targets[target];
    if (state.recovered) return;
    state.recovered = true;
    this.logger.info({ storage: target, failures: state.failures }, `storage writes succeed again: ${target}`);
  }

  /** Failed writes by target since start-up (for metrics). */
  counts(): Record<StorageTarget, number> {
    return { recording: this.targets.recording.failures, database: this.targets.database.failures };
  }

  /** The targets failing now (see the class), each with its last failure; empty when storage is fine. */
  failing(): StorageFailure[] {
    const nowMs = this.now();
    return STORAGE_TARGETS.map((t) => this.targets[t]).flatMap((s) => (s.last && !s.recovered && nowMs - s.lastAtMs < this.windowMs ? [s.last] : []));
  }

  /** The database's writes, reported by the connection (see observeWrites). */
  databaseObserver(): DatabaseWriteObserver {
    return {
      written: () => this.succeeded("database"),
      failed: (err) => this.failed("database", err),
    };
  }
}

/** The reason /readyz gives while targets are failing: what failed, the last error, what to do. */
export function storageProblem(failing: readonly StorageFailure[], dataDir: string): string {
  const what = failing.map((f) => `${f.target} writes (${f.code ?? f.message})`).join(" and ");
  const last = failing.map((f) => f.at).sort().at(-1);
  return `disk full or failing: ${what} failed, the last at ${last}; free space on the disk of ${dataDir}`;
}
