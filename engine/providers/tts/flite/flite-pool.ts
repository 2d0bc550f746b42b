import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { FliteError } from "./flite-error.js";
import { FLITE_WORKER_SOURCE, type FliteJob, type FliteWorkerData, type FliteWorkerMessage } from "./flite-worker.js";

/** One utterance's audio as Flite rendered it: mono PCM16 at the voice's rate. */
export interface FlitePcm {
  samples: Int16Array;
  sampleRate: number;
}

export interface FlitePoolConfig {
  /** The compiled flite.wasm, shared by every worker. */
  module: WebAssembly.Module;
  /** Worker threads, each running one utterance at a time. */
  size: number;
  /** Flite voice name each worker warms up with. */
  warmUpVoice: string;
}

interface Job extends FliteJob {
  /** Settles the caller's promise once (a job aborted while running is settled already). */
  settle(result: { pcm: FlitePcm } | { error: unknown }): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  running: Job | undefined;
  error: unknown;
}

/** What the pool is doing now: for metrics and capacity planning. */
export interface FlitePoolStats {
  /** Worker threads alive (ready or warming up). */
  workers: number;
  /** Workers rendering an utterance now. */
  busy: number;
  /** Utterances waiting for a worker. */
  queued: number;
}

/**
 * Worker threads that run Flite off the main thread, so one call's synthesis never delays another
 * call's 20 ms audio pacing. Jobs wait in one first-in, first-out queue: concurrent calls take
 * turns utterance by utterance. An aborted job leaves the queue at once; if it is already running
 * it finishes in its worker and the audio is dropped. A worker that dies fails its job and is
 * replaced; if no worker is left and none can start, every job fails from then on.
 */
export class FlitePool {
  private readonly queue: Job[] = [];
  private readonly slots = new Set<Slot>();
  private nextFile = 1;
  private failure: unknown;
  private closed = false;

  private constructor(
    private readonly config: FlitePoolConfig,
    /** Holds each worker's WAV file (WASI writes only to preopened host directories). */
    private readonly dir: string,
  ) {}

  /** Starts and warms up `size` workers; resolves once all are ready. */
  static async start(config: FlitePoolConfig): Promise<FlitePool> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "parley-flite-"));
    const pool = new FlitePool(Object.freeze({ ...config }), dir);
    try {
      await Promise.all(Array.from({ length: config.size }, () => pool.spawn()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  stats(): FlitePoolStats {
    let busy = 0;
    for (const slot of this.slots) if (slot.running) busy++;
    return { workers: this.slots.size, busy, queued: this.queue.length };
  }

  /** Synthesizes `text` with Flite voice `voice`; rejects with the signal's reason on abort. */
  run(voice: string, text: string, signal: AbortSignal): Promise<FlitePcm> {
    if (this.closed) return Promise.reject(closedError());
    if (this.failure) return Promise.reject(this.failure);
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<FlitePcm>((resolve, reject) => {
      const onAbort = () => {
        const queued = this.queue.indexOf(job);
        if (queued >= 0) this.queue.splice(queued, 1);
        job.settle({ error: signal.reason });
      };
      let settled = false;
      const job: Job = {
        voice,
        text,
        settle: (result) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener("abort", onAbort);
          if ("pcm" in result) resolve(result.pcm);
          else reject(result.error);
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Terminates the workers (a running utterance is cut), fails waiting jobs, removes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = closedError();
    for (const job of this.queue.splice(0)) job.settle({ error });
    const slots = [...this.slots];
    this.slots.clear();
    for (const slot of slots) slot.running?.settle({ error });
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
    await rm(this.dir, { recursive: true, force: true });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.running) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.running = job;
      const message: FliteJob = { voice: job.voice, text: job.text };
      slot.worker.postMessage(message);
    }
  }

  private spawn(): Promise<void> {
    const workerData: FliteWorkerData = {
      module: this.config.module,
      dir: this.dir,
      file: `worker-${this.nextFile++}.wav`,
      warmUpVoice: this.config.warmUpVoice,
    };
    // node:wasi prints an ExperimentalWarning on Node 20 in every worker; it says nothing actionable.
    const worker = new Worker(FLITE_WORKER_SOURCE, { eval: true, workerData, execArgv: ["--disable-warning=ExperimentalWarning"] });
    const slot: Slot = { worker, ready: false, running: undefined, error: undefined };
    this.slots.add(slot);
    return new Promise<void>((resolve, reject) => {
      worker.on("message", (message: FliteWorkerMessage) => {
        if (message.type === "ready") {
          slot.ready = true;
          resolve();
        } else {
          const job = slot.running;
          slot.running = undefined;
          if (message.type === "done") job?.settle({ pcm: { samples: message.samples, sampleRate: message.sampleRate } });
          else job?.settle({ error: new FliteError(`Flite failed: ${message.message}`, { retryable: false }) });
        }
        this.dispatch();
      });
      worker.on("error", (error) => {
        slot.error = error;
      });
      worker.on("exit", (code) => {
        if (this.closed || !this.slots.delete(slot)) return;
        const detail = slot.error instanceof Error ? `: ${slot.error.message}` : "";
        // Retryable: a new worker takes the next utterance.
        const error = new FliteError(`a Flite worker exited with code ${code}${detail}`, { retryable: true, cause: slot.error });
        slot.running?.settle({ error });
        reject(error);
        if (slot.ready) this.spawn().catch((spawnError: unknown) => this.failIfEmpty(spawnError));
      });
    });
  }

  /** A replacement worker could not start: with no worker left, every waiting and future job fails. */
  private failIfEmpty(cause: unknown): void {
    if (this.slots.size > 0) return;
    const error = new FliteError(`no Flite worker can start: ${cause instanceof Error ? cause.message : String(cause)}`, { retryable: false, cause });
    this.failure = error;
    for (const job of this.queue.splice(0)) job.settle({ error });
  }
}

function closedError(): FliteError {
  return new FliteError("the Flite worker pool is closed", { retryable: false });
}
