/**
 * Types for @echogarden/rnnoise-wasm (RNNoise compiled by Emscripten, its model built into the
 * wasm; the package ships no types). Pointers are byte offsets into the module's heap.
 */
declare module "@echogarden/rnnoise-wasm" {
  export interface RnnoiseWasmModule {
    /** View of the heap; replaced when memory grows, so read it after any allocation. */
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** Samples per frame: 480 (10 ms at 48 kHz). */
    _rnnoise_get_frame_size(): number;
    /** A new denoiser state with the built-in model (pass 0), or 0 when out of memory. */
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    /**
     * Denoises one frame of floats in int16 scale from `input` into `output` (may be the same
     * buffer); returns the probability (0..1) that the frame is voice.
     */
    _rnnoise_process_frame(state: number, output: number, input: number): number;
  }
  const createRnnoiseModule: () => Promise<RnnoiseWasmModule>;
  export default createRnnoiseModule;
}
