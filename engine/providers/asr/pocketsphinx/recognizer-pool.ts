import { AsrError } from "../asr-error.js";
import { abortable } from "../../../stream/abortable.js";
import { type RecognizerProcessConfig, RecognizerProcess } from "./recognizer-process.js";

export interface RecognizerPoolConfig {
  process: RecognizerProcessConfig;
  /** Most recognizer processes alive at once; each decodes one stretch of speech at a time. */
  maxRecognizers: number;
  /** How long `acquire` waits for a recognizer when all are busy before failing with `capacity_exhausted`. Default 5 s. */
  maxWaitMs?: number;
}

/** What the pool holds now: for logs, health checks and capacity planning. */
export interface RecognizerPoolStats {
  max: number;
  /** Recognizers leased (decoding a caller's speech now). */
  leased: number;
  /** Loaded recognizers waiting for speech. */
  idle: number;
  /** Recognizers loading with nobody waiting for them (warm-up, or an aborted acquire). */
  starting: number;
  /** Acquires waiting for a recognizer to be given back. */
  waiting: number;
}

const DEFAULT_MAX_WAIT_MS = 5_000;

/**
 * Recognizer processes shared by calls. A call leases one while its caller speaks (see
 * PocketsphinxSession) and gives it back after the final: callers speak a fraction of the
 * time, so a few recognizers serve many calls, and a ringing or listening call holds none. A
 * returned recognizer stays loaded (the model load is the expensive part). When every
 * recognizer is leased, `acquire` waits its turn (first come, first served), at most
 * `maxWaitMs`, then fails with `capacity_exhausted`: the caller is asked to repeat rather
 * than left waiting for words that will not come.
 *
 * A recognizer that dies while idle frees its slot; one that dies while leased is released
 * by its session, which then acquires again.
 */
export class RecognizerPool {
  private readonly config: Readonly<RecognizerPoolConfig>;
  private readonly idle: RecognizerProcess[] = [];
  /** Loading with no call waiting for them; the next `acquire` claims the first. */
  private readonly loading: Loading[] = [];
  private readonly running = new Set<RecognizerProcess>();
  /** Acquires waiting for a release, oldest first; each is woken to try again. */
  private readonly waiters: Array<() => void> = [];
  private leased = 0;
  private closed = false;

  constructor(config: RecognizerPoolConfig) {
    if (!Number.isInteger(config.maxRecognizers) || config.maxRecognizers < 1) {
      throw new RangeError(`maxRecognizers must be a positive integer, not ${config.maxRecognizers}`);
    }
    this.config = Object.freeze({ ...config });
  }

  stats(): RecognizerPoolStats {
    return { max: this.config.maxRecognizers, leased: this.leased, idle: this.idle.length, starting: this.loading.length, waiting: this.waiters.length };
  }

  /** Leases a loaded recognizer, waiting for one when all are leased; rejects with the signal's reason on abort. */
  async acquire(signal: AbortSignal): Promise<RecognizerProcess> {
    let waitedMs = 0;
    for (let turn = 0; ; turn++) {
      this.throwIfClosed();
      signal.throwIfAborted();
      const idle = this.idle.pop();
      if (idle) {
        this.leased++;
        return idle;
      }
      const loading = this.loading.shift() ?? (this.room() > 0 ? this.launch() : undefined);
      if (loading) return this.claim(loading, signal);
      const started = Date.now();
      // A waiter woken by a release that lost the race keeps its place at the head.
      await this.waitForRelease(signal, this.maxWaitMs() - waitedMs, turn > 0);
      waitedMs += Date.now() - started;
    }
  }

  /**
   * Makes sure a recognizer can be had: loads one when none is loaded or loading (the first
   * call after start-up, or after crashes). Fails with `recognizer_unavailable` when the
   * recognizer cannot run at all (not built, model missing).
   */
  async ensureLoaded(signal: AbortSignal): Promise<void> {
    this.throwIfClosed();
    if (this.idle.length > 0 || this.leased > 0) return;
    const loading = this.loading[0] ?? (this.room() > 0 ? this.park(this.launch()) : undefined);
    if (loading) await abortable(loading.ready, signal);
  }

  /** Gives a leased recognizer back; a live one stays loaded for the next speech, a dead one frees its slot. */
  release(process: RecognizerProcess): void {
    this.leased--;
    if (!this.closed && process.alive) this.idle.push(process);
    // A dead one frees its slot: the waiter loads a new recognizer in its place.
    this.waiters.shift()?.();
  }

  /** Loads up to `count` recognizers ahead of the first calls (within the maximum). */
  async warmUp(count: number): Promise<void> {
    this.throwIfClosed();
    const started = Array.from({ length: Math.min(count, this.room()) }, () => this.park(this.launch()));
    await Promise.all(started.map((loading) => loading.ready));
  }

  /** Stops every recognizer; open sessions see their recognizer exit. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    this.loading.length = 0;
    for (const wake of this.waiters.splice(0)) wake();
    await Promise.all([...this.running].map((process) => process.stop()));
  }

  private maxWaitMs(): number {
    return this.config.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  }

  /** Leases a recognizer that is loading; aborted, it finishes loading for the next one. */
  private async claim(loading: Loading, signal: AbortSignal): Promise<RecognizerProcess> {
    this.leased++;
    try {
      await abortable(loading.ready, signal);
      return loading.process;
    } catch (error) {
      this.leased--;
      if (signal.aborted) this.park(loading);
      // Its slot is free again (failed or parked): the next waiter may use it.
      this.waiters.shift()?.();
      throw error;
    }
  }

  /** Resolves at the next release; rejects on abort, or with `capacity_exhausted` after `withinMs`. */
  private waitForRelease(signal: AbortSignal, withinMs: number, first: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        const at = this.waiters.indexOf(wake);
        if (at >= 0) this.waiters.splice(at, 1);
      };
      const wake = () => {
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new AsrError(
            "capacity_exhausted",
            `all ${this.config.maxRecognizers} pocketsphinx recognizers stayed busy for ${this.maxWaitMs()} ms (each decodes one caller's speech at a time, ~125 MB and a third of a core); ` +
              "raise PARLEY_ASR_RECOGNIZERS if the machine has cores and memory to spare, lower the call capacity, or use another ASR provider",
            { retryable: true },
          ),
        );
      }, Math.max(0, withinMs));
      signal.addEventListener("abort", onAbort, { once: true });
      if (first) this.waiters.unshift(wake);
      else this.waiters.push(wake);
    });
  }

  private room(): number {
    return this.config.maxRecognizers - this.leased - this.idle.length - this.loading.length;
  }

  private launch(): Loading {
    const process = new RecognizerProcess(this.config.process);
    this.running.add(process);
    const forget = () => {
      this.running.delete(process);
      const idle = this.idle.indexOf(process);
      if (idle >= 0) this.idle.splice(idle, 1);
    };
    process.once("exit", forget);
    const ready = process.start();
    // Also covers a recognizer that never ran (binary missing): no exit event then.
    ready.catch(forget);
    return { process, ready };
  }

  /** Keeps a recognizer nobody waits for: claimable while it loads, idle once loaded. */
  private park(loading: Loading): Loading {
    this.loading.push(loading);
    const unpark = () => {
      const at = this.loading.indexOf(loading);
      if (at >= 0) this.loading.splice(at, 1);
      return at >= 0;
    };
    loading.ready.then(
      () => {
        // Not unparked: a call claimed it while it loaded.
        if (unpark() && !this.closed && loading.process.alive) this.idle.push(loading.process);
      },
      unpark,
    );
    return loading;
  }

  private throwIfClosed(): void {
    if (this.closed) throw new AsrError("closed", "the pocketsphinx provider is closed", { retryable: false });
  }
}

interface Loading {
  process: RecognizerProcess;
  /** Resolves once the model is loaded. */
  ready: Promise<void>;
}
