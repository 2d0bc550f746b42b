/** What a Flite worker is started with. */
export interface FliteWorkerData {
  /** Compiled once by the provider; workers share its code (structured clone does not recompile). */
  module: WebAssembly.Module;
  /** Host directory for Flite's WAV output: the command writes its audio only to a file. */
  dir: string;
  /** File name inside `dir`, the worker's own, rewritten for each utterance. */
  file: string;
  /** Voice of the warm-up utterance run before the worker reports ready. */
  warmUpVoice: string;
}

/** One utterance for a worker to synthesize. */
export interface FliteJob {
  /** Flite's voice name (`slt`, `kal`, ...). */
  voice: string;
  text: string;
}

/** What a worker posts back: once `ready`, then one `done` or `failed` per job, in order. */
export type FliteWorkerMessage =
  | { type: "ready" }
  | { type: "done"; samples: Int16Array; sampleRate: number }
  | { type: "failed"; message: string };

/**
 * The worker's code, run with `new Worker(FLITE_WORKER_SOURCE, { eval: true })`. It is a string
 * rather than a module file because a worker thread loads plain JavaScript: a `.ts` worker file
 * would only run after compilation to dist/, not under vitest, which transforms modules for the
 * main thread only. Kept to the part that must run off the main thread: instantiate the module
 * (one instance per utterance: a WASI program runs `_start` once), run Flite, read its PCM16.
 * The first utterance compiles Flite's functions (V8 compiles WASM lazily), so the worker runs a
 * warm-up utterance before reporting ready; the compiled code is shared with the other workers.
 */
export const FLITE_WORKER_SOURCE = String.raw`
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { WASI } = require("node:wasi");

const { module, dir, file, warmUpVoice } = workerData;

function synthesize(voice, text) {
  const wasi = new WASI({
    version: "preview1",
    args: ["flite", "-voice", voice, "-t", text, "-o", "/out/" + file],
    preopens: { "/out": dir },
    returnOnExit: true,
  });
  const exitCode = wasi.start(new WebAssembly.Instance(module, { wasi_snapshot_preview1: slowCalls(wasi.wasiImport) }));
  if (exitCode !== 0) throw new Error("flite exited with code " + exitCode);
  return readPcm16Wav(readFileSync(join(dir, file)));
}

// Node's WASI functions are V8 fast API calls when WASM calls them directly, and their
// allocations can start a garbage collection inside such a call, which fast calls do not allow:
// the process crashes at random (nodejs/node#46777; here about one run in four of 90 utterances).
// A JavaScript function in between makes each one an ordinary call, where collection is safe.
function slowCalls(wasiImport) {
  const imports = {};
  for (const [name, call] of Object.entries(wasiImport)) imports[name] = (...args) => call(...args);
  return imports;
}

// Flite writes mono 16-bit PCM RIFF; walk the chunks rather than trust a 44-byte header.
function readPcm16Wav(wav) {
  let sampleRate = 0;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString("latin1", at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === "fmt ") {
      if (wav.readUInt16LE(at + 8) !== 1 || wav.readUInt16LE(at + 10) !== 1 || wav.readUInt16LE(at + 22) !== 16) {
        throw new Error("flite wrote a WAV that is not mono PCM16");
      }
      sampleRate = wav.readUInt32LE(at + 12);
    } else if (id === "data") {
      const bytes = Math.min(size, wav.length - at - 8) & ~1;
      const samples = new Int16Array(bytes / 2);
      Buffer.from(samples.buffer).set(wav.subarray(at + 8, at + 8 + bytes));
      if (!sampleRate) throw new Error("flite wrote a WAV without a format chunk");
      return { samples, sampleRate };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error("flite wrote a WAV without audio");
}

parentPort.on("message", ({ voice, text }) => {
  let result;
  try {
    result = synthesize(voice, text);
  } catch (error) {
    parentPort.postMessage({ type: "failed", message: error instanceof Error ? error.message : String(error) });
    return;
  }
  parentPort.postMessage({ type: "done", samples: result.samples, sampleRate: result.sampleRate }, [result.samples.buffer]);
});

synthesize(warmUpVoice, "Ready.");
parentPort.postMessage({ type: "ready" });
`;
