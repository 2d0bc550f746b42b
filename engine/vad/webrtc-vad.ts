import createFvadModule from "@echogarden/fvad-wasm";
import type { FvadWasmModule } from "@echogarden/fvad-wasm";
import type { AudioFrame } from "../audio/audio-frame.js";
import type { Vad } from "./vad.js";

export const WEBRTC_VAD_SAMPLE_RATES = [8000, 16000] as const;
export const WEBRTC_VAD_FRAME_MS = [10, 20, 30] as const;
/** libfvad's aggressiveness: 0 lets most sound through as speech, 3 the least. */
export const WEBRTC_VAD_MODES = [0, 1, 2, 3] as const;
export type WebRtcVadMode = (typeof WEBRTC_VAD_MODES)[number];
export const DEFAULT_WEBRTC_VAD_MODE: WebRtcVadMode = 3;

type WebRtcSampleRate = (typeof WEBRTC_VAD_SAMPLE_RATES)[number];

const MAX_FRAME_SAMPLES = (Math.max(...WEBRTC_VAD_SAMPLE_RATES) * Math.max(...WEBRTC_VAD_FRAME_MS)) / 1000;

function isWebRtcSampleRate(rate: number): rate is WebRtcSampleRate {
  return (WEBRTC_VAD_SAMPLE_RATES as readonly number[]).includes(rate);
}

/**
 * libfvad (the WebRTC VAD) in one WebAssembly instance per process, shared by all streams:
 * each stream owns an fvad instance in its heap. Calls are synchronous, so streams never
 * interleave inside the module.
 */
export class WebRtcVadModule {
  private constructor(private readonly wasm: FvadWasmModule) {}

  static async load(): Promise<WebRtcVadModule> {
    return new WebRtcVadModule(await createFvadModule());
  }

  /** A new stream for audio at `sampleRate` (8000 or 16000) taking 10, 20 or 30 ms frames. */
  createStream(sampleRate: number, mode: WebRtcVadMode = DEFAULT_WEBRTC_VAD_MODE): Vad {
    if (!isWebRtcSampleRate(sampleRate)) {
      throw new Error(`WebRTC VAD supports ${WEBRTC_VAD_SAMPLE_RATES.join(" and ")} Hz, not ${sampleRate} Hz`);
    }
    if (!WEBRTC_VAD_MODES.includes(mode)) {
      throw new Error(`WebRTC VAD mode must be one of ${WEBRTC_VAD_MODES.join(", ")}, not ${mode}`);
    }
    const instance = this.wasm._fvad_new();
    if (instance === 0) throw new Error("WebRTC VAD: out of memory creating an instance");
    const buffer = this.wasm._malloc(MAX_FRAME_SAMPLES * Int16Array.BYTES_PER_ELEMENT);
    const stream = new WebRtcVadStream(this.wasm, instance, buffer, sampleRate, mode);
    stream.reset();
    return stream;
  }
}

class WebRtcVadStream implements Vad {
  readonly name = "webrtc";
  readonly sampleRates = WEBRTC_VAD_SAMPLE_RATES;
  private closed = false;

  constructor(
    private readonly wasm: FvadWasmModule,
    private readonly instance: number,
    private readonly buffer: number,
    private readonly sampleRate: WebRtcSampleRate,
    private readonly mode: WebRtcVadMode,
  ) {}

  async process(frame: AudioFrame): Promise<number> {
    if (this.closed) throw new Error("WebRTC VAD stream is closed");
    if (frame.sampleRate !== this.sampleRate) {
      throw new Error(`WebRTC VAD stream runs at ${this.sampleRate} Hz but got a ${frame.sampleRate} Hz frame`);
    }
    const length = frame.samples.length;
    if (!WEBRTC_VAD_FRAME_MS.some((ms) => (this.sampleRate * ms) / 1000 === length)) {
      throw new Error(`WebRTC VAD takes ${WEBRTC_VAD_FRAME_MS.join(", ")} ms frames, got ${length} samples at ${this.sampleRate} Hz`);
    }
    // HEAP16 is read here, not kept: a memory growth replaces the view.
    this.wasm.HEAP16.set(frame.samples, this.buffer / Int16Array.BYTES_PER_ELEMENT);
    const voiced = this.wasm._fvad_process(this.instance, this.buffer, length);
    if (voiced < 0) throw new Error("WebRTC VAD rejected the frame");
    return voiced;
  }

  /** fvad_reset also restores the default mode and rate, so both are set again. */
  reset(): void {
    if (this.closed) return;
    this.wasm._fvad_reset(this.instance);
    if (this.wasm._fvad_set_sample_rate(this.instance, this.sampleRate) !== 0 || this.wasm._fvad_set_mode(this.instance, this.mode) !== 0) {
      throw new Error("WebRTC VAD refused its sample rate or mode");
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wasm._fvad_free(this.instance);
    this.wasm._free(this.buffer);
  }
}
