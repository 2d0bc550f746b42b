import { AsrError } from "../asr-error.js";
import { abortable } from "../../../stream/abortable.js";
import { encodeRequest, REQUEST } from "./recognizer-protocol.js";
import { type RecognizerProcessConfig, RecognizerProcess } from "./recognizer-process.js";

export interface RecognizerPoolConfig {
  process: RecognizerProcessConfig;
  /** Most recognizer processes alive at once; each serves one call. */
  maxRecognizers: number;
}

/** What the pool holds now: for logs, health checks and capacity planning. */
export interface RecognizerPoolStats {
  max: number;
  /** Slots held by open sessions. */
  leased: number;
  /** Loaded recognizers waiting for a call. */
  idle: number;
  /** Recognizers loading with no call waiting for them (warm-up, or an aborted open). */
  starting: number;
}

/**
 * Recognizer processes for calls. A call leases a slot for its whole duration and gives it
 * back when it ends; a returned recognizer stays loaded for the next call (the model load is
 * the expensive part). When every slot is leased, `acquire` fails at once with
 * `capacity_exhausted` instead of queueing: a call cannot usefully wait minutes for another
 * call to end, and the control plane limits concurrent calls itself.
 *
 * A recognizer that dies while idle frees its slot; one that dies while leased is released
 * by its session, which then acquires again (in the same tick, so the slot cannot be taken).
 */
export class RecognizerPool {
  private readonly config: Readonly<RecognizerPoolConfig>;
  private readonly idle: RecognizerProcess[] = [];
  /** Loading with no call waiting for them; the next `acquire` claims the first. */
  private readonly loading: Loading[] = [];
  private readonly running = new Set<RecognizerProcess>();
  private leased = 0;
  private closed = false;

  constructor(config: RecognizerPoolConfig) {
    if (!Number.isInteger(config.maxRecognizers) || config.maxRecognizers < 1) {
      throw new RangeError(`maxRecognizers must be a positive integer, not ${config.maxRecognizers}`);
    }
    this.config = Object.freeze({ ...config });
  }

  stats(): RecognizerPoolStats {
    return { max: this.config.maxRecognizers, leased: this.leased, idle: this.idle.length, starting: this.loading.length };
  }

  /** Leases a slot with a loaded recognizer; rejects with the signal's reason on abort. */
  async acquire(signal: AbortSignal): Promise<RecognizerProcess> {
    this.throwIfClosed();
    signal.throwIfAborted();
    const idle = this.idle.pop();
    if (idle) {
      this.leased++;
      await idle.send(encodeRequest(REQUEST.reset));
      return idle;
    }
    const loading = this.loading.shift() ?? (this.room() > 0 ? this.launch() : undefined);
    if (!loading) {
      throw new AsrError(
        "capacity_exhausted",
        `all ${this.config.maxRecognizers} pocketsphinx recognizers are serving calls (each takes one call, ~100 MB, and a third of a core while its caller speaks); ` +
          "raise the ASR maxRecognizers setting if the machine has cores and memory to spare, or use another ASR provider",
        { retryable: true },
      );
    }
    this.leased++;
    try {
      await abortable(loading.ready, signal);
      return loading.process;
    } catch (error) {
      this.leased--;
      // Aborted while loading: the recognizer finishes loading for the next call.
      if (signal.aborted) this.park(loading);
      throw error;
    }
  }

  /** Gives a leased slot back; a live recognizer stays loaded for the next call, a dead one frees the slot. */
  release(process: RecognizerProcess): void {
    this.leased--;
    if (this.closed || !process.alive) return;
    this.idle.push(process);
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
    await Promise.all([...this.running].map((process) => process.stop()));
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
