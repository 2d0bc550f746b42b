import { Worker } from "node:worker_threads";
import { DOCUMENT_READ_LIMITS, READ_FAILURES } from "./document-read-limits.js";
import type { ReaderAnswer, ReaderInput } from "./document-reader-worker.js";
import { DocumentTextError, type DocumentType } from "./document-text.js";
import { workerScript } from "./worker-script.js";

/*
 * An uploaded document's text, read off the main thread (issue 31). The API's main thread also
 * carries live calls' media sockets, and pdf.js on a crafted PDF (streams that inflate hugely,
 * thousands of tiny text runs) can hold a thread for seconds. So each upload is read by a worker
 * thread of its own (document-reader-worker.ts) under a V8 heap limit and a wall-clock timeout,
 * after which the thread is terminated: the only way to stop pdf.js mid-page.
 *
 * The heap limit does not count ArrayBuffers, and pdf.js keeps a content stream's inflated bytes
 * in one (a 1 MB PDF can inflate to 1 GiB), so the process's resident memory is watched too: a
 * reader under which it grows by more than twice the heap limit is terminated as well.
 *
 * A fresh thread per document rather than a long-lived pool: a reader that was terminated or ran
 * out of memory would have to be replaced anyway, nothing a hostile document leaves on a heap
 * reaches the next one, and starting a thread and loading pdf.js (tens of milliseconds) is small
 * next to an upload. One reader at a time: resident memory is the whole process's, so growth is
 * only the reader's when it is alone (and uploads are rare next to calls). Further uploads wait
 * their turn; their clock starts when their reader does.
 */

/** Readers running at once: one, so the process's memory growth is charged to it. */
export const MAX_READERS = 1;

/** How often the process's resident memory is looked at while a reader runs. */
const MEMORY_CHECK_MS = 50;

const MB = 1024 * 1024;

/** The young generation's bound: V8's semispaces, enough for pdf.js's short-lived objects. */
const MAX_YOUNG_GENERATION_MB = 32;

export interface ReadDocumentOptions {
  timeoutMs?: number;
  maxHeapMb?: number;
}

let running = 0;
const waiting: (() => void)[] = [];

/** Reader threads alive now (tests: a reader that timed out is gone, not left spinning). */
export function activeReaders(): number {
  return running;
}

/**
 * The document's text as documentText gives it, read on a worker thread. Rejects with a
 * DocumentTextError (message safe to show the client) for a document that cannot be read, takes
 * longer than `timeoutMs`, needs more than `maxHeapMb` of heap, or whose text is longer than
 * DOCUMENT_READ_LIMITS.maxChars; with a plain Error for a failure of the reader itself.
 */
export async function readDocument(bytes: Buffer, type: DocumentType, options: ReadDocumentOptions = {}): Promise<string> {
  const script = workerScript(import.meta.url, "./document-reader-worker.js");
  // One copy into a buffer of its own, moved to the reader: `bytes` may be a view into a larger
  // buffer that must not be detached, and cloning would copy the upload a second time.
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  while (running >= MAX_READERS) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await runReader(script, { bytes: copy, type, maxChars: DOCUMENT_READ_LIMITS.maxChars }, options);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function runReader(script: URL, input: ReaderInput, options: ReadDocumentOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DOCUMENT_READ_LIMITS.timeoutMs;
  const maxHeapMb = options.maxHeapMb ?? DOCUMENT_READ_LIMITS.maxHeapMb;
  return new Promise<string>((resolve, reject) => {
    const worker = new Worker(script, {
      workerData: input,
      transferList: [input.bytes],
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: MAX_YOUNG_GENERATION_MB },
      // Not the parent's flags (a test runner's loaders, inspector ports).
      execArgv: [],
    });
    // The first outcome wins; the promise settles when the thread has exited, so a reader that
    // was given up on is gone by then.
    let outcome: { text: string } | { error: Error } | undefined;
    const settle = (result: { text: string } | { error: Error }): void => {
      outcome ??= result;
      void worker.terminate();
    };
    const timer = setTimeout(() => settle({ error: new DocumentTextError(READ_FAILURES.timeout) }), timeoutMs);
    const startRss = process.memoryUsage.rss();
    const memoryWatch = setInterval(() => {
      if (process.memoryUsage.rss() - startRss > 2 * maxHeapMb * MB) settle({ error: new DocumentTextError(READ_FAILURES.memory) });
    }, MEMORY_CHECK_MS);
    worker.once("message", (answer: ReaderAnswer) => {
      if (answer.ok) settle(answer.text.length > DOCUMENT_READ_LIMITS.maxChars ? { error: new DocumentTextError(READ_FAILURES.tooLong) } : { text: answer.text });
      else if ("documentError" in answer) settle({ error: new DocumentTextError(answer.documentError) });
      else settle({ error: new Error(`the document reader failed: ${answer.error}`) });
    });
    worker.on("error", (err: Error & { code?: string }) => {
      settle({ error: err.code === "ERR_WORKER_OUT_OF_MEMORY" ? new DocumentTextError(READ_FAILURES.memory) : new Error(`the document reader failed: ${err.message}`) });
    });
    worker.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(memoryWatch);
      const result = outcome ?? { error: new Error(`the document reader stopped without an answer (exit code ${code})`) };
      if ("text" in result) resolve(result.text);
      else reject(result.error);
    });
  });
}
