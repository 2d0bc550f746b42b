import createRnnoiseModule from "@echogarden/rnnoise-wasm";
import type { RnnoiseWasmModule } from "@echogarden/rnnoise-wasm";
import type { AudioFrame } from "./audio-frame.js";
import { clampToInt16 } from "./pcm16.js";
import { Resampler } from "./resampler.js";

/**
 * Noise suppression of the caller's audio with RNNoise (Xiph, BSD; WebAssembly from
 * @echogarden/rnnoise-wasm, model built in). One suppressor per stream: it keeps RNNoise's
 * state and the resamplers' history, so streams must not share one.
 *
 * RNNoise works on 10 ms frames (480 samples) at 48 kHz: each frame is resampled up, denoised,
 * and resampled down, and comes back as frames of the rate and length that went in, in order.
 * Frames must be a whole number of 10 ms (the engine's are 20 ms).
 *
 * Delay (`delayMs`): RNNoise's overlap-add puts its output 10 ms behind its input, and each
 * resampler needs its look-ahead (5 ms each way at 8 kHz, 2.5 ms at 16 kHz). Leading silence
 * of the up-resampler's look-ahead aligns RNNoise's frames with the input's 10 ms boundaries,
 * so no frame waits for the next one: 20 ms in all at 8 kHz, 15 ms at 16 kHz.
 *
 * The WebAssembly module is loaded once per process and shared; calls are synchronous, so
 * streams never interleave inside it.
 */
export const NOISE_SUPPRESSOR_SAMPLE_RATES = [8000, 16000, 24000, 48000] as const;

const RNNOISE_RATE = 48000;
/** RNNoise's own delay: one frame, from its overlap-add. */
const RNNOISE_DELAY_MS = 10;

let loaded: Promise<RnnoiseWasmModule> | undefined;

function rnnoiseModule(): Promise<RnnoiseWasmModule> {
  loaded ??= createRnnoiseModule().catch((err: unknown) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

export class NoiseSuppressor {
  readonly sampleRate: number;
  /** How far the output lags the input, in ms (see above). */
  readonly delayMs: number;
  private readonly frameSize: number;
  private readonly up: Resampler;
  private readonly down: Resampler;
  /** 48 kHz samples waiting for a whole RNNoise frame. */
  private pending: Float32Array;
  private pendingLength: number;
  /** Denoised samples at `sampleRate` not yet returned. */
  private queue: Int16Array;
  private queueLength: number;
  private readonly denoised: Int16Array;
  private closed = false;

  private constructor(
    private readonly wasm: RnnoiseWasmModule,
    private readonly state: number,
    private readonly buffer: number,
    sampleRate: number,
  ) {
    this.sampleRate = sampleRate;
    this.frameSize = wasm._rnnoise_get_frame_size();
    this.denoised = new Int16Array(this.frameSize);
    this.up = new Resampler({ inputRate: sampleRate, outputRate: RNNOISE_RATE });
    this.down = new Resampler({ inputRate: RNNOISE_RATE, outputRate: sampleRate });
    // Leading silence as long as the up-resampler's look-ahead: after each 10 ms of input,
    // exactly whole RNNoise frames are ready.
    this.pendingLength = Math.round((this.up.latencyMs * RNNOISE_RATE) / 1000);
    this.pending = new Float32Array(this.pendingLength + 4 * this.frameSize);
    // Leading silence as long as the down-resampler's look-ahead: the output never runs short.
    this.queueLength = Math.round((this.down.latencyMs * sampleRate) / 1000);
    this.queue = new Int16Array(this.queueLength + sampleRate / 10);
    this.delayMs = this.up.latencyMs + this.down.latencyMs + RNNOISE_DELAY_MS;
  }

  /** A suppressor for a stream at `sampleRate` (8000 or 16000 on the call path). */
  static async create(sampleRate: number): Promise<NoiseSuppressor> {
    if (!(NOISE_SUPPRESSOR_SAMPLE_RATES as readonly number[]).includes(sampleRate)) {
      throw new RangeError(`noise suppression supports ${NOISE_SUPPRESSOR_SAMPLE_RATES.join(", ")} Hz, not ${sampleRate} Hz`);
    }
    const wasm = await rnnoiseModule();
    const state = wasm._rnnoise_create(0);
    if (state === 0) throw new Error("RNNoise: out of memory creating a denoiser");
    const buffer = wasm._malloc(wasm._rnnoise_get_frame_size() * Float32Array.BYTES_PER_ELEMENT);
    if (buffer === 0) {
      wasm._rnnoise_destroy(state);
      throw new Error("RNNoise: out of memory for its frame buffer");
    }
    return new NoiseSuppressor(wasm, state, buffer, sampleRate);
  }

  /** The denoised frame for `frame`: same rate and length, `delayMs` behind. */
  process(frame: AudioFrame): AudioFrame {
    if (this.closed) throw new Error("noise suppressor is closed");
    if (frame.sampleRate !== this.sampleRate) throw new RangeError(`noise suppressor runs at ${this.sampleRate} Hz but got a ${frame.sampleRate} Hz frame`);
    const length = frame.samples.length;
    if (length % (this.sampleRate / 100) !== 0) throw new RangeError(`noise suppression takes whole 10 ms frames, got ${length} samples at ${this.sampleRate} Hz`);
    this.appendPending(this.up.push(frame.samples));
    let used = 0;
    for (; used + this.frameSize <= this.pendingLength; used += this.frameSize) {
      this.appendQueue(this.down.push(this.denoise(this.pending.subarray(used, used + this.frameSize))));
    }
    this.pending.copyWithin(0, used, this.pendingLength);
    this.pendingLength -= used;
    if (this.queueLength < length) throw new Error("noise suppressor fell behind its input (a bug)");
    const out = this.queue.slice(0, length);
    this.queue.copyWithin(0, length, this.queueLength);
    this.queueLength -= length;
    return { samples: out, sampleRate: this.sampleRate };
  }

  /** Frees the RNNoise state; the suppressor cannot be used after. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wasm._rnnoise_destroy(this.state);
    this.wasm._free(this.buffer);
  }

  private denoise(frame: Float32Array): Int16Array {
    // HEAPF32 is read here, not kept: a memory growth replaces the view.
    const offset = this.buffer / Float32Array.BYTES_PER_ELEMENT;
    this.wasm.HEAPF32.set(frame, offset);
    this.wasm._rnnoise_process_frame(this.state, this.buffer, this.buffer);
    const heap = this.wasm.HEAPF32;
    for (let i = 0; i < this.frameSize; i++) this.denoised[i] = clampToInt16(Math.round(heap[offset + i]!));
    return this.denoised;
  }

  private appendPending(samples: Int16Array): void {
    if (this.pendingLength + samples.length > this.pending.length) {
      const grown = new Float32Array(2 * (this.pendingLength + samples.length));
      grown.set(this.pending.subarray(0, this.pendingLength));
      this.pending = grown;
    }
    this.pending.set(samples, this.pendingLength);
    this.pendingLength += samples.length;
  }

  private appendQueue(samples: Int16Array): void {
    if (this.queueLength + samples.length > this.queue.length) {
      const grown = new Int16Array(2 * (this.queueLength + samples.length));
      grown.set(this.queue.subarray(0, this.queueLength));
      this.queue = grown;
    }
    this.queue.set(samples, this.queueLength);
    this.queueLength += samples.length;
  }
}
