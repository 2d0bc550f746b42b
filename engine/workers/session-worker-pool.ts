import { readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { defaultCallCapacity } from "../call-capacity.js";
import { engineVoices, remoteRecognizer, type Engine, type EngineOptions, type EngineUsage, type SessionWorkers } from "../engine.js";
import type { LiveCall, LiveCallOptions } from "../live-call.js";
import { packageRoot } from "../package-root.js";
import { defaultRecognizerCount } from "../providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { defaultFliteWorkers } from "../providers/tts/flite/flite-tts.js";
import type { AgentSettings } from "../types.js";
import { RemoteCall } from "./remote-call.js";
import { MessageBatch } from "./message-batch.js";
import type { FromWorker, ToWorker } from "./session-protocol.js";

/** A replacement for a worker that died is tried again after this when it fails to start. */
const RESPAWN_RETRY_MS = 5_000;
/** How long `close()` waits for a worker to stop its calls and providers before ending it. */
const CLOSE_GRACE_MS = 10_000;
/** A call's worker chosen by its greeting is kept for it this long (an outbound call rings, then runs). */
const PIN_MS = 5 * 60_000;

/**
 * The engine, with calls on session workers: one thread per core by default, each with its own
 * providers (VAD, a share of the recognizers and TTS workers, the dialogue). This thread keeps
 * the control plane, the media sockets and the tools; a call goes to the worker with the fewest
 * calls. A worker that dies ends only its own calls (see RemoteCall.workerDied) and is replaced.
 */
export async function createEngine(given: EngineOptions = {}): Promise<Engine> {
  const { onProviderRetry, onProviderSwitch, onProviderRequest, ...options } = given;
  const workers = Math.max(1, options.sessionWorkers ?? os.availableParallelism());
  const recognizers = options.asrRecognizers ?? defaultRecognizerCount();
  const workerOptions: EngineOptions = {
    ...options,
    asrRecognizers: Math.max(1, Math.ceil(recognizers / workers)),
    ttsWorkers: Math.max(1, Math.ceil((options.ttsWorkers ?? defaultFliteWorkers()) / workers)),
  };
  const pool = new SessionWorkerPool(workers, workerOptions, { onProviderRetry, onProviderSwitch, onProviderRequest });
  await pool.start();
  return {
    voices: engineVoices(options),
    capacity: options.callCapacity ?? defaultCallCapacity(remoteRecognizer(options)),
    createCall: (callOptions) => pool.createCall(callOptions),
    prepareGreeting: (agent, context, signal, callId) => pool.prepareGreeting(agent, context, signal, callId),
    usage: () => pool.usage(),
    workers: pool,
    close: () => pool.close(),
  };
}

interface PooledWorker {
  worker: Worker;
  /** What goes to the worker, sent once per turn of the event loop. */
  batch: MessageBatch<ToWorker>;
  calls: Map<string, RemoteCall>;
  greetings: Map<number, () => void>;
  usage: EngineUsage | null;
  /** The last error the thread threw, for its calls' error event. */
  lastError: string | undefined;
}

export class SessionWorkerPool implements SessionWorkers {
  private readonly workers: PooledWorker[] = [];
  private readonly pins = new Map<string, PooledWorker>();
  private nextGreeting = 0;
  private closing = false;

  constructor(
    private readonly count: number,
    private readonly workerOptions: EngineOptions,
    private readonly told: Pick<EngineOptions, "onProviderRetry" | "onProviderSwitch" | "onProviderRequest">,
  ) {}

  /** Starts every worker; rejects (with none left running) when one cannot load its providers. */
  async start(): Promise<void> {
    const started = await Promise.allSettled(Array.from({ length: this.count }, () => this.spawn()));
    const failed = started.find((result) => result.status === "rejected");
    if (failed) {
      await this.close();
      throw failed.reason;
    }
  }

  createCall(options: LiveCallOptions): LiveCall {
    const pooled = this.pick(options.callId);
    if (!pooled) throw new Error("no session worker is running (a replacement is starting)");
    this.pins.delete(options.callId);
    const call = new RemoteCall({ post: (message, transfer) => pooled.batch.post(message, transfer) }, options);
    pooled.calls.set(options.callId, call);
    return call;
  }

  prepareGreeting(agent: AgentSettings, context: Record<string, unknown>, signal: AbortSignal, callId?: string): Promise<void> {
    const pooled = this.pick(callId);
    if (!pooled || signal.aborted) return Promise.resolve();
    if (callId !== undefined) {
      this.pins.set(callId, pooled);
      setTimeout(() => this.pins.get(callId) === pooled && this.pins.delete(callId), PIN_MS).unref();
    }
    const requestId = ++this.nextGreeting;
    return new Promise<void>((resolve) => {
      pooled.greetings.set(requestId, resolve);
      this.post(pooled, { type: "prepare_greeting", requestId, agent, context });
      signal.addEventListener("abort", () => this.post(pooled, { type: "cancel_greeting", requestId }), { once: true });
    });
  }

  /** The workers' pools, summed (as each last reported them, once a second). */
  usage(): EngineUsage {
    const reports = this.workers.map((w) => w.usage).filter((u): u is EngineUsage => u !== null);
    const withRecognizers = reports.filter((u) => u.recognizers !== null);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    return {
      recognizers:
        withRecognizers.length === 0
          ? null
          : {
              inUse: sum(withRecognizers.map((u) => u.recognizers!.inUse)),
              capacity: sum(withRecognizers.map((u) => u.recognizers!.capacity)),
              queued: sum(withRecognizers.map((u) => u.recognizers!.queued)),
            },
      ttsWorkers: {
        inUse: sum(reports.map((u) => u.ttsWorkers.inUse)),
        capacity: sum(reports.map((u) => u.ttsWorkers.capacity)),
        queued: sum(reports.map((u) => u.ttsWorkers.queued)),
      },
    };
  }

  get threadIds(): number[] {
    return this.workers.map((w) => w.worker.threadId);
  }

  threadOf(callId: string): number | undefined {
    return this.workers.find((w) => w.calls.has(callId))?.worker.threadId;
  }

  async terminate(threadId: number): Promise<void> {
    await this.workers.find((w) => w.worker.threadId === threadId)?.worker.terminate();
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.workers.map(async ({ worker, batch }) => {
        batch.flush();
        const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
        worker.postMessage([{ type: "close" }] satisfies ToWorker[]);
        const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /** The call's pinned worker if it is alive, else the one with the fewest calls. */
  private pick(callId?: string): PooledWorker | undefined {
    const pinned = callId === undefined ? undefined : this.pins.get(callId);
    if (pinned && this.workers.includes(pinned)) return pinned;
    let best: PooledWorker | undefined;
    for (const w of this.workers) if (!best || w.calls.size < best.calls.size) best = w;
    return best;
  }

  private post(pooled: PooledWorker, message: ToWorker): void {
    if (this.workers.includes(pooled)) pooled.batch.post(message);
  }

  /** Starts a worker; resolves once its providers are loaded and it is in the pool. */
  private spawn(): Promise<void> {
    const worker = new Worker(workerScript(), { workerData: { options: this.workerOptions }, execArgv: ["--disable-warning=ExperimentalWarning"] });
    const batch = new MessageBatch<ToWorker>((messages, transfer) => worker.postMessage(messages, transfer));
    const pooled: PooledWorker = { worker, batch, calls: new Map(), greetings: new Map(), usage: null, lastError: undefined };
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on("message", (messages: FromWorker[]) => {
        for (const message of messages) {
          if (message.type === "ready") {
            ready = true;
            if (this.closing) return void worker.terminate();
            this.workers.push(pooled);
            resolve();
          } else if (message.type === "failed_to_load") {
            reject(new Error(`a session worker could not load the engine: ${message.message}`));
          } else {
            this.receive(pooled, message);
          }
        }
      });
      worker.on("error", (err) => (pooled.lastError = err.message));
      worker.on("exit", (code) => {
        if (!ready) reject(new Error(`a session worker stopped while loading the engine (exit code ${code}${pooled.lastError ? `: ${pooled.lastError}` : ""})`));
        else this.exited(pooled, code);
      });
    });
  }

  private receive(pooled: PooledWorker, message: FromWorker): void {
    switch (message.type) {
      case "usage":
        pooled.usage = message.usage;
        return;
      case "provider_retry":
        this.told.onProviderRetry?.({ stage: message.stage, provider: message.provider });
        return;
      case "provider_request":
        this.told.onProviderRequest?.({ stage: message.stage, provider: message.provider, firstOutputMs: message.firstOutputMs, durationMs: message.durationMs, outcome: message.outcome });
        return;
      case "provider_switch":
        this.told.onProviderSwitch?.({ stage: message.stage, from: message.from, to: message.to, reason: message.reason });
        return;
      case "greeting_prepared":
        pooled.greetings.get(message.requestId)?.();
        pooled.greetings.delete(message.requestId);
        return;
      case "closed":
      case "ready":
      case "failed_to_load":
        return;
      default: {
        const call = pooled.calls.get(message.callId);
        call?.receive(message);
        if (message.type === "ended") pooled.calls.delete(message.callId);
      }
    }
  }

  /** A worker is gone: its calls end with what they had, and (unless closing) a new one takes its place. */
  private exited(pooled: PooledWorker, code: number): void {
    const at = this.workers.indexOf(pooled);
    if (at >= 0) this.workers.splice(at, 1);
    const why = pooled.lastError ?? `exit code ${code}`;
    for (const call of pooled.calls.values()) void call.workerDied(why);
    pooled.calls.clear();
    for (const done of pooled.greetings.values()) done();
    pooled.greetings.clear();
    if (!this.closing) this.replace();
  }

  private replace(): void {
    this.spawn().catch(() => {
      if (!this.closing) setTimeout(() => this.replace(), RESPAWN_RETRY_MS).unref();
    });
  }
}

/**
 * The worker's script: beside this module once built. Run from the TypeScript sources (tests),
 * workers load the built engine, which must not be older than the sources: a stale build
 * would test old code, so that is refused with what to run.
 */
function workerScript(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./session-worker.js", import.meta.url);
  const root = packageRoot(import.meta.url);
  const built = path.join(root, "dist/engine/workers/session-worker.js");
  const builtAt = statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newest = newestSource(path.join(root, "engine"));
  if (builtAt < newest.mtimeMs) {
    throw new Error(`session workers run the built engine (${built}), which is ${builtAt ? "older than" : "missing, and needed for"} ${path.relative(root, newest.file)}: run npm run build`);
  }
  return pathToFileURL(built);
}

function newestSource(dir: string): { file: string; mtimeMs: number } {
  let newest = { file: dir, mtimeMs: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestSource(full) : entry.name.endsWith(".ts") ? { file: full, mtimeMs: statSync(full).mtimeMs } : newest;
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}
