import type { Vad } from "./vad.js";
import type { WebRtcVadMode } from "./webrtc-vad.js";

/** VADs selectable by configuration; the first is the default. */
export const VAD_NAMES = ["silero", "webrtc"] as const;
export type VadName = (typeof VAD_NAMES)[number];
export const DEFAULT_VAD_NAME: VadName = VAD_NAMES[0];

export interface VadFactoryOptions {
  /** Aggressiveness of the webrtc VAD (default DEFAULT_WEBRTC_VAD_MODE). */
  webrtcMode?: WebRtcVadMode;
}

/** Makes VAD streams of one kind, sharing one loaded model across them. Create once per process. */
export interface VadFactory {
  readonly name: VadName;
  /** A new stream (one per call direction) for audio at `sampleRate`. */
  createVad(sampleRate: number): Vad;
  /** Releases the model; close the streams first. */
  close(): Promise<void>;
}

/**
 * Loads the named VAD. Implementations are imported on demand, so the webrtc fallback still
 * works where onnxruntime's native binary cannot load.
 */
export async function createVadFactory(name: VadName = DEFAULT_VAD_NAME, options: VadFactoryOptions = {}): Promise<VadFactory> {
  switch (name) {
    case "silero": {
      const { SileroVadModel } = await import("./silero-vad.js");
      const model = await SileroVadModel.load();
      return { name, createVad: (sampleRate) => model.createStream(sampleRate), close: () => model.close() };
    }
    case "webrtc": {
      const { WebRtcVadModule } = await import("./webrtc-vad.js");
      const wasm = await WebRtcVadModule.load();
      // The WebAssembly instance has nothing to release; the garbage collector takes it.
      return { name, createVad: (sampleRate) => wasm.createStream(sampleRate, options.webrtcMode), close: async () => {} };
    }
    default:
      throw new Error(`Unknown VAD "${String(name)}": expected one of ${VAD_NAMES.join(", ")}`);
  }
}
