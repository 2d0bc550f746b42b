import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { AudioFrame } from "../audio/audio-frame.js";
import { readSileroModel } from "./silero-model.js";
import { SILERO_WORKER_SOURCE, type SileroWorkerData, type SileroWorkerMessage, type SileroWorkerRequest } from "./silero-worker.js";
import type { Vad } from "./vad.js";

export const SILERO_SAMPLE_RATES = [8000, 16000] as const;
export type SileroSampleRate = (typeof SILERO_SAMPLE_RATES)[number];

/**
 * Per rate, as upstream's v5 wrapper (OnnxWrapper in silero-vad's utils_vad.py) feeds the
 * model: windows of 256/512 new samples, each preceded by the last 32/64 samples before it.
 */
const WINDOWS: SileroWorkerData["windows"] = { 8000: { window: 256, context: 32 }, 16000: { window: 512, context: 64 } };

export interface SileroVadModelOptions {
  /** Defaults to the file resolved from node_modules. */
  modelPath?: string;
  /** Defaults to the pinned SILERO_MODEL_SHA256. */
  expectedSha256?: string;
}

function isSileroSampleRate(rate: number): rate is SileroSampleRate {
  return (SILERO_SAMPLE_RATES as readonly number[]).includes(rate);
}

type Pending = { resolve: (probability: number) => void; reject: (err: Error) => void };

/**
 * The Silero VAD v5 model, loaded once per process in a worker thread that every stream
 * shares (see silero-worker.ts): the main thread only posts frames and reads probabilities,
 * and the worker runs the windows of all streams in batches.
 */
export class SileroVadModel {
  private readonly pending = new Map<number, Map<number, Pending>>();
  private nextStreamId = 1;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (message: SileroWorkerMessage) => {
      if (message.t === "results") {
        for (let i = 0; i < message.ids.length; i++) {
          const waiting = this.pending.get(message.ids[i]!);
          const entry = waiting?.get(message.seqs[i]!);
          if (!entry) continue;
          waiting!.delete(message.seqs[i]!);
          entry.resolve(message.probabilities[i]!);
        }
      } else if (message.t === "failed") {
        this.fail(new Error(`Silero VAD worker failed: ${message.message}`));
      }
    });
    worker.on("error", (err) => this.fail(err));
    // The worker must not keep the process alive on its own.
    worker.unref();
  }

  static async load(options: SileroVadModelOptions = {}): Promise<SileroVadModel> {
    const model = await readSileroModel(options.modelPath, options.expectedSha256);
    const workerData: SileroWorkerData = { ortPath: createRequire(import.meta.url).resolve("onnxruntime-node"), model, windows: WINDOWS };
    const worker = new Worker(SILERO_WORKER_SOURCE, { eval: true, workerData });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: SileroWorkerMessage) => {
        if (message.t === "ready") resolve();
        else if (message.t === "failed") reject(new Error(`Silero VAD model did not load: ${message.message}`));
        else return;
        worker.off("message", onMessage);
      };
      worker.on("message", onMessage);
      worker.once("error", reject);
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    return new SileroVadModel(worker);
  }

  /** A new stream with its own state, for audio at `sampleRate` (8000 or 16000). */
  createStream(sampleRate: number): Vad {
    if (!isSileroSampleRate(sampleRate)) {
      throw new Error(`Silero VAD supports ${SILERO_SAMPLE_RATES.join(" and ")} Hz, not ${sampleRate} Hz`);
    }
    const id = this.nextStreamId++;
    this.pending.set(id, new Map());
    this.post({ t: "open", id, rate: sampleRate });
    return new SileroVadStream(id, sampleRate, this);
  }

  /** Stops the worker; close every stream first. */
  async close(): Promise<void> {
    this.fail(new Error("Silero VAD model is closed"));
    await this.worker.terminate();
  }

  /** @internal A stream's frame: resolves with the probability once the worker has taken it in. */
  submit(id: number, seq: number, samples: Float32Array): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.get(id)?.set(seq, { resolve, reject });
      this.post({ t: "frame", id, seq, samples }, [samples.buffer as ArrayBuffer]);
    });
  }

  /** @internal */
  post(request: SileroWorkerRequest, transfer: ArrayBuffer[] = []): void {
    if (request.t === "close") this.pending.delete(request.id);
    if (!this.failure) this.worker.postMessage(request, transfer);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const waiting of this.pending.values()) for (const entry of waiting.values()) entry.reject(err);
    this.pending.clear();
  }
}

class SileroVadStream implements Vad {
  readonly name = "silero";
  readonly sampleRates = SILERO_SAMPLE_RATES;
  private seq = 0;
  /** Bumped by reset(): frames sent before a reset answer 0, whatever the worker says. */
  private epoch = 0;
  private last: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly id: number,
    private readonly sampleRate: SileroSampleRate,
    private readonly model: SileroVadModel,
  ) {}

  process(frame: AudioFrame): Promise<number> {
    if (this.closed) return Promise.reject(new Error("Silero VAD stream is closed"));
    if (frame.sampleRate !== this.sampleRate) {
      return Promise.reject(new Error(`Silero VAD stream runs at ${this.sampleRate} Hz but got a ${frame.sampleRate} Hz frame`));
    }
    const epoch = this.epoch;
    const result = this.model.submit(this.id, ++this.seq, Float32Array.from(frame.samples, (s) => s / 32768)).then((p) => (epoch === this.epoch ? p : 0));
    this.last = result.catch(() => undefined);
    return result;
  }

  reset(): void {
    this.epoch++;
    this.model.post({ t: "reset", id: this.id });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.last;
    this.model.post({ t: "close", id: this.id });
  }
}
