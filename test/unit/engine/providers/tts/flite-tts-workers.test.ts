import { existsSync } from "node:fs";
import type { Worker, WorkerOptions } from "node:worker_threads";
import { beforeEach, expect, it, vi } from "vitest";
import type { FliteWorkerData } from "../../../../../engine/providers/tts/flite/flite-worker.js";
import { FliteTts } from "../../../../../engine/providers/tts/flite/flite-tts.js";

const started = vi.hoisted(() => [] as Array<{ worker: Worker; options: WorkerOptions | undefined }>);

// Records the workers the provider starts, to see them gone after close().
vi.mock("node:worker_threads", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:worker_threads")>();
  class RecordedWorker extends actual.Worker {
    constructor(filename: string | URL, options?: WorkerOptions) {
      super(filename, options);
      started.push({ worker: this, options });
    }
  }
  return { ...actual, Worker: RecordedWorker };
});

async function* from(pieces: string[]): AsyncIterable<string> {
  yield* pieces;
}

async function drain(frames: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const _ of frames) count++;
  return count;
}

beforeEach(() => {
  started.length = 0;
});

it("close() terminates the workers, fails synthesis still running and removes Flite's directory", async () => {
  const tts = new FliteTts({ workers: 3 });
  await tts.start();
  expect(started).toHaveLength(3);
  for (const { worker } of started) expect(worker.threadId).toBeGreaterThan(0);
  const dirs = new Set(started.map(({ options }) => (options?.workerData as FliteWorkerData).dir));
  expect(dirs.size).toBe(1);
  const [dir] = dirs;
  expect(existsSync(dir!)).toBe(true);

  const long = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1} of a long reply.`);
  const frames = tts.synthesize(from(long), { voiceId: "flite-slt", signal: new AbortController().signal })[Symbol.asyncIterator]();
  expect((await frames.next()).done).toBe(false);
  await tts.close();

  // A terminated worker's threadId is -1: no thread is left to keep the process alive.
  for (const { worker } of started) expect(worker.threadId).toBe(-1);
  expect(existsSync(dir!)).toBe(false);
  const drain = async () => {
    for (let next = await frames.next(); !next.done; next = await frames.next());
  };
  await expect(drain()).rejects.toThrow("closed");
}, 60_000);

it("replaces a worker that dies, failing only the utterance it was running", async () => {
  const tts = new FliteTts({ workers: 1 });
  await tts.start();
  try {
    const long = Array.from({ length: 6 }, () => "This rather long sentence keeps the only worker busy for a good while.").join(" ");
    const frames = tts.synthesize(from([long]), { voiceId: "flite-slt", signal: new AbortController().signal })[Symbol.asyncIterator]();
    const first = frames.next();
    // Let the utterance reach the worker, then kill the worker under it.
    await new Promise((resolve) => setImmediate(resolve));
    await started[0]!.worker.terminate();
    await expect(first).rejects.toThrow("exited");
    await expect(first).rejects.toMatchObject({ name: "FliteError", retryable: true });

    expect(await drain(tts.synthesize(from(["Still here."]), { voiceId: "flite-slt", signal: new AbortController().signal }))).toBeGreaterThan(0);
    expect(started).toHaveLength(2);
    expect(started[1]!.worker.threadId).toBeGreaterThan(0);
  } finally {
    await tts.close();
  }
}, 60_000);
