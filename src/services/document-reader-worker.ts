/**
 * A document reader's thread (document-reader.ts): reads one upload's text with documentText,
 * posts one answer and ends. Started for each upload with the bytes transferred to it, under the
 * reader's heap limits and clock.
 */
import { parentPort, workerData } from "node:worker_threads";
import { READ_FAILURES } from "./document-read-limits.js";
import { DocumentTextError, documentText, type DocumentType } from "./document-text.js";

/** What the reader starts this thread with: `bytes` is transferred, not copied. */
export interface ReaderInput {
  bytes: ArrayBuffer;
  type: DocumentType;
  /** A longer text is refused here rather than copied back. */
  maxChars: number;
}

/** The one answer: the text, a DocumentTextError's message (safe to show), or another error (a defect: kept from the client). */
export type ReaderAnswer = { ok: true; text: string } | { ok: false; documentError: string } | { ok: false; error: string };

const input = workerData as ReaderInput;
let answer: ReaderAnswer;
try {
  const text = await documentText(Buffer.from(input.bytes), input.type);
  answer = text.length > input.maxChars ? { ok: false, documentError: READ_FAILURES.tooLong } : { ok: true, text };
} catch (err) {
  answer = err instanceof DocumentTextError ? { ok: false, documentError: err.message } : { ok: false, error: err instanceof Error ? err.message : String(err) };
}
parentPort!.postMessage(answer);
