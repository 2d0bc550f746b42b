import type { Readable } from "node:stream";

/**
 * A stored recording found for reading, and how many bytes it has: a local file (served by
 * path, so HTTP range requests and validators work: a player can seek) or a stream of its
 * bytes (from a bucket).
 */
export type OpenedRecording = { size: number } & ({ file: string } | { body: Readable });

/**
 * Where ended calls' recordings are kept: the data directory (LocalRecordingStore, the
 * default) or an S3-compatible bucket (S3RecordingStore). The engine always writes a call's
 * WAV to a local file while the call runs; when the call ends, `save` hands it to the store,
 * and the reference it returns is what `calls.recording_path` holds. Recording links, the
 * deletion of a call's content and retention only go through the reference.
 */
export interface RecordingStore {
  /**
   * Keeps the recording the engine wrote at `localFile` for call `callId`; the reference to
   * store. Never rejects: when the recording cannot be moved where it belongs, it stays at
   * `localFile` and that path is the reference (the call never loses its recording).
   */
  save(callId: string, localFile: string): Promise<string>;
  /** The recording `ref` names, or null when there is none (deleted, or never written). */
  open(ref: string): Promise<OpenedRecording | null>;
  /** Deletes the recording `ref` names; a recording already gone is not an error. */
  remove(ref: string): Promise<void>;
  exists(ref: string): Promise<boolean>;
  /** Lets go of connections (at shutdown). */
  close?(): Promise<void>;
}

/** The prefix of references to recordings in a bucket: `s3://<bucket>/<key>`. */
export const S3_REF_PREFIX = "s3://";

/** The bucket and key of an `s3://<bucket>/<key>` reference; null for any other (a local path). */
export function parseS3Ref(ref: string): { bucket: string; key: string } | null {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(ref);
  return match ? { bucket: match[1]!, key: match[2]! } : null;
}
