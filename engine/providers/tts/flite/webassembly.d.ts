/**
 * The part of the WebAssembly JavaScript API that Flite needs. Node provides it as a global, but
 * the project's libraries (ES2023 and @types/node 20) do not declare it, and lib.dom would bring
 * the whole browser along.
 */
declare namespace WebAssembly {
  /** Compiled code; posting it to a worker shares the code instead of compiling it again. */
  interface Module {}
  interface Instance {
    readonly exports: Record<string, unknown>;
  }
  type Imports = Record<string, Record<string, unknown>>;
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
  function instantiate(module: Module, imports?: Imports): Promise<Instance>;
}
