/**
 * Types for @echogarden/fvad-wasm (libfvad compiled by Emscripten; the package ships none).
 * Pointers are byte offsets into the module's heap.
 */
declare module "@echogarden/fvad-wasm" {
  export interface FvadWasmModule {
    /** Views of the heap; replaced when memory grows, so read them after any allocation. */
    HEAP16: Int16Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** A new instance (mode 0, 8000 Hz), or 0 when out of memory. */
    _fvad_new(): number;
    _fvad_free(instance: number): void;
    /** Clears state and restores mode 0 and 8000 Hz. */
    _fvad_reset(instance: number): void;
    /** 0 on success, -1 for a mode outside 0..3. */
    _fvad_set_mode(instance: number, mode: number): number;
    /** 0 on success, -1 for a rate other than 8000, 16000, 32000 or 48000. */
    _fvad_set_sample_rate(instance: number, sampleRate: number): number;
    /** 1 voice, 0 no voice, -1 for a frame that is not 10, 20 or 30 ms long. */
    _fvad_process(instance: number, frame: number, length: number): number;
  }
  const createFvadModule: () => Promise<FvadWasmModule>;
  export default createFvadModule;
}
