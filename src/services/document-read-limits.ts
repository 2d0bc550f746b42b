/*
 * The bounds on reading one uploaded document (document-reader.ts), and what the client is told
 * when one is reached: an upload is untrusted, and reading it must not run forever, take the
 * process's memory, or hand the passage splitter and the index an unbounded text.
 */

export const DOCUMENT_READ_LIMITS = {
  /** Wall-clock time for one document, from its reader's start (waiting for a free reader not counted). */
  timeoutMs: 20_000,
  /** The reader thread's V8 old generation (its young generation is bounded separately). */
  maxHeapMb: 256,
  /** The longest text kept from one document, in UTF-16 code units. */
  maxChars: 2_000_000,
} as const;

export const READ_FAILURES = {
  timeout: "the document took too long to read",
  memory: "the document needs too much memory to read",
  tooLong: "the document's text is too long",
} as const;
