/** What the Silero worker is started with. */
export interface SileroWorkerData {
  /** Resolved path of onnxruntime-node (an eval worker resolves bare names from the working directory). */
  ortPath: string;
  /** The verified model bytes. */
  model: Uint8Array;
  /** Per rate: new samples per window and context samples before them (upstream v5 wrapper's figures). */
  windows: Record<number, { window: number; context: number }>;
}

/** Main thread -> worker, in order per stream. */
export type SileroWorkerRequest =
  | { t: "open"; id: number; rate: number }
  | { t: "frame"; id: number; seq: number; samples: Float32Array }
  | { t: "reset"; id: number }
  | { t: "close"; id: number };

/** Worker -> main thread: `ready` once, then the probability after each frame (`ids[i]`, `seqs[i]`, `probabilities[i]`). */
export type SileroWorkerMessage =
  | { t: "ready" }
  | { t: "results"; ids: number[]; seqs: number[]; probabilities: number[] }
  | { t: "failed"; message: string };

/**
 * The worker's code, run with `new Worker(SILERO_WORKER_SOURCE, { eval: true })` (plain
 * JavaScript for the reason given in flite-worker.ts). It owns every stream's state and runs
 * the model off the main thread, in batches: each round takes the next complete window of
 * every stream that has one and runs them as one inference (~0.07 ms a window in a batch of
 * 32 against ~0.18 ms alone). A stream's windows stay in order, since each needs the state the
 * one before left. onnxruntime-node defers every run by a `setImmediate`; on the main thread
 * that cost each window an event-loop turn there, and with many calls the caller audio fell
 * seconds behind. Here the loop does nothing else.
 */
export const SILERO_WORKER_SOURCE = String.raw`
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const ort = require(workerData.ortPath);

const STATE = 128;
const MAX_BATCH = 128;
const streams = new Map();
let session;
let pumping = false;

function openStream(id, rate) {
  const shape = workerData.windows[rate];
  streams.set(id, {
    id, rate, window: shape.window, context: shape.context,
    row: new Float32Array(shape.context + shape.window), filled: 0,
    state: new Float32Array(2 * STATE), probability: 0, queue: [],
  });
}

function resetStream(s) {
  s.row.fill(0);
  s.filled = 0;
  s.state = new Float32Array(2 * STATE);
  s.probability = 0;
}

parentPort.on("message", (m) => {
  if (m.t === "open") openStream(m.id, m.rate);
  else {
    const s = streams.get(m.id);
    if (!s) return;
    s.queue.push(m);
  }
  if (!pumping) void pump();
});

// Feeds queued messages into each stream until every stream is idle or waits for a model run.
function advance(results) {
  const due = [];
  for (const s of streams.values()) {
    while (s.queue.length > 0) {
      const m = s.queue[0];
      if (m.t === "reset") { resetStream(s); s.queue.shift(); continue; }
      if (m.t === "close") { streams.delete(s.id); break; }
      m.offset = m.offset || 0;
      const n = Math.min(s.window - s.filled, m.samples.length - m.offset);
      s.row.set(m.samples.subarray(m.offset, m.offset + n), s.context + s.filled);
      s.filled += n;
      m.offset += n;
      if (s.filled === s.window) { due.push(s); break; }
      results.ids.push(s.id); results.seqs.push(m.seq); results.probabilities.push(s.probability);
      s.queue.shift();
    }
  }
  return due;
}

async function runBatch(batch) {
  const size = batch.length;
  const rowLength = batch[0].row.length;
  const input = new Float32Array(size * rowLength);
  // State is [2, batch, 128]: the two halves of a stream's state sit size rows apart.
  const state = new Float32Array(2 * size * STATE);
  batch.forEach((s, b) => {
    input.set(s.row, b * rowLength);
    state.set(s.state.subarray(0, STATE), b * STATE);
    state.set(s.state.subarray(STATE), (size + b) * STATE);
  });
  const out = await session.run({
    input: new ort.Tensor("float32", input, [size, rowLength]),
    state: new ort.Tensor("float32", state, [2, size, STATE]),
    sr: new ort.Tensor("int64", BigInt64Array.of(BigInt(batch[0].rate)), []),
  });
  const p = out.output.data;
  const next = out.stateN.data;
  batch.forEach((s, b) => {
    s.probability = p[b];
    const st = new Float32Array(2 * STATE);
    st.set(next.subarray(b * STATE, (b + 1) * STATE), 0);
    st.set(next.subarray((size + b) * STATE, (size + b + 1) * STATE), STATE);
    s.state = st;
    // The window's last samples are the next window's context.
    s.row.copyWithin(0, s.window);
    s.filled = 0;
  });
}

async function pump() {
  pumping = true;
  try {
    for (;;) {
      const results = { ids: [], seqs: [], probabilities: [] };
      const due = advance(results);
      if (results.ids.length > 0) parentPort.postMessage({ t: "results", ...results });
      if (due.length === 0) break;
      const byRate = new Map();
      for (const s of due) byRate.set(s.rate, [...(byRate.get(s.rate) || []), s]);
      for (const group of byRate.values()) {
        for (let i = 0; i < group.length; i += MAX_BATCH) await runBatch(group.slice(i, i + MAX_BATCH));
      }
    }
  } catch (error) {
    parentPort.postMessage({ t: "failed", message: error instanceof Error ? error.message : String(error) });
  } finally {
    pumping = false;
  }
}

ort.InferenceSession.create(workerData.model, {
  executionProviders: ["cpu"], intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: "all",
}).then((s) => {
  session = s;
  parentPort.postMessage({ t: "ready" });
}, (error) => parentPort.postMessage({ t: "failed", message: error instanceof Error ? error.message : String(error) }));
`;
