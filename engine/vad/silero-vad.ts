import * as ort from "onnxruntime-node";
import type { AudioFrame } from "../audio/audio-frame.js";
import { readSileroModel } from "./silero-model.js";
import type { Vad } from "./vad.js";

export const SILERO_SAMPLE_RATES = [8000, 16000] as const;
export type SileroSampleRate = (typeof SILERO_SAMPLE_RATES)[number];

/**
 * Per rate, as upstream's v5 wrapper (OnnxWrapper in silero-vad's utils_vad.py) feeds the
 * model: windows of 256/512 new samples, each preceded by the last 32/64 samples before it.
 */
const WINDOW_SAMPLES: Record<SileroSampleRate, number> = { 8000: 256, 16000: 512 };
const CONTEXT_SAMPLES: Record<SileroSampleRate, number> = { 8000: 32, 16000: 64 };
const STATE_DIMS = [2, 1, 128] as const;
const STATE_LENGTH = STATE_DIMS[0] * STATE_DIMS[1] * STATE_DIMS[2];

export interface SileroVadModelOptions {
  /** Defaults to the file resolved from node_modules. */
  modelPath?: string;
  /** Defaults to the pinned SILERO_MODEL_SHA256. */
  expectedSha256?: string;
}

function isSileroSampleRate(rate: number): rate is SileroSampleRate {
  return (SILERO_SAMPLE_RATES as readonly number[]).includes(rate);
}

/**
 * The Silero VAD v5 model in one onnxruntime session. Load it once per process and share it:
 * the model is stateless, each stream owns its recurrent state. Sharing is safe because
 * onnxruntime-node runs `session.run` synchronously on the JS thread (deferred by
 * setImmediate), so runs from concurrent streams never overlap.
 */
export class SileroVadModel {
  private constructor(private readonly session: ort.InferenceSession) {}

  static async load(options: SileroVadModelOptions = {}): Promise<SileroVadModel> {
    const bytes = await readSileroModel(options.modelPath, options.expectedSha256);
    // One thread: a window costs well under a millisecond, and calls run side by side on few cores.
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ["cpu"],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
    });
    return new SileroVadModel(session);
  }

  /** A new stream with its own state, for audio at `sampleRate` (8000 or 16000). */
  createStream(sampleRate: number): Vad {
    if (!isSileroSampleRate(sampleRate)) {
      throw new Error(`Silero VAD supports ${SILERO_SAMPLE_RATES.join(" and ")} Hz, not ${sampleRate} Hz`);
    }
    return new SileroVadStream(this.session, sampleRate);
  }

  /** Releases the session; close every stream first. */
  async close(): Promise<void> {
    await this.session.release();
  }
}

function zeroState(): ort.Tensor {
  return new ort.Tensor("float32", new Float32Array(STATE_LENGTH), [...STATE_DIMS]);
}

function outputTensor(outputs: ort.InferenceSession.ReturnType, name: string): ort.Tensor {
  const value = outputs[name];
  if (!(value instanceof ort.Tensor)) throw new Error(`Silero VAD model returned no ${name} tensor`);
  return value;
}

class SileroVadStream implements Vad {
  readonly name = "silero";
  readonly sampleRates = SILERO_SAMPLE_RATES;
  private readonly windowSamples: number;
  private readonly contextSamples: number;
  private readonly sr: ort.Tensor;
  /** Context followed by the window being filled: exactly the model's `input` row. */
  private readonly input: Float32Array;
  private filled = 0;
  private state = zeroState();
  private probability = 0;
  /** Frames are handled one after another: each window needs the state of the one before. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Bumped by reset(): work queued before a reset must not write state after it. */
  private epoch = 0;
  private closed = false;

  constructor(
    private readonly session: ort.InferenceSession,
    private readonly sampleRate: SileroSampleRate,
  ) {
    this.windowSamples = WINDOW_SAMPLES[sampleRate];
    this.contextSamples = CONTEXT_SAMPLES[sampleRate];
    this.sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(sampleRate)), []);
    this.input = new Float32Array(this.contextSamples + this.windowSamples);
  }

  process(frame: AudioFrame): Promise<number> {
    if (this.closed) return Promise.reject(new Error("Silero VAD stream is closed"));
    if (frame.sampleRate !== this.sampleRate) {
      return Promise.reject(
        new Error(`Silero VAD stream runs at ${this.sampleRate} Hz but got a ${frame.sampleRate} Hz frame`),
      );
    }
    // Copied now: the caller may reuse its buffer before the queued work runs.
    const pcm = Float32Array.from(frame.samples, (s) => s / 32768);
    const epoch = this.epoch;
    const result = this.queue.then(() => this.consume(pcm, epoch));
    this.queue = result.catch(() => undefined);
    return result;
  }

  reset(): void {
    this.epoch++;
    this.state = zeroState();
    this.input.fill(0);
    this.filled = 0;
    this.probability = 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
  }

  private async consume(pcm: Float32Array, epoch: number): Promise<number> {
    let offset = 0;
    while (offset < pcm.length) {
      if (epoch !== this.epoch) return 0;
      const count = Math.min(this.windowSamples - this.filled, pcm.length - offset);
      this.input.set(pcm.subarray(offset, offset + count), this.contextSamples + this.filled);
      this.filled += count;
      offset += count;
      if (this.filled === this.windowSamples) await this.runWindow(epoch);
    }
    return epoch === this.epoch ? this.probability : 0;
  }

  private async runWindow(epoch: number): Promise<void> {
    const input = new ort.Tensor("float32", this.input, [1, this.input.length]);
    const outputs = await this.session.run({ input, state: this.state, sr: this.sr });
    if (epoch !== this.epoch) return;
    this.state = outputTensor(outputs, "stateN");
    const [probability] = outputTensor(outputs, "output").data as Float32Array;
    if (probability === undefined) throw new Error("Silero VAD model returned an empty output");
    this.probability = probability;
    // The window's last samples become the next window's context.
    this.input.copyWithin(0, this.windowSamples);
    this.filled = 0;
  }
}
