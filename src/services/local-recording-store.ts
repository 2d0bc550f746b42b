import { rm, stat } from "node:fs/promises";
import type { OpenedRecording, RecordingStore } from "./recording-store.js";
import { S3_REF_PREFIX } from "./recording-store.js";

/**
 * Recordings stay in the data directory, where the engine wrote them
 * (`<data dir>/recordings/<call id>.wav`); the reference is the file's path.
 */
export class LocalRecordingStore implements RecordingStore {
  async save(_callId: string, localFile: string): Promise<string> {
    return localFile;
  }

  async open(ref: string): Promise<OpenedRecording | null> {
    if (ref.startsWith(S3_REF_PREFIX)) return null;
    const info = await stat(ref).catch(() => null);
    if (!info?.isFile()) return null;
    return { size: info.size, file: ref };
  }

  async remove(ref: string): Promise<void> {
    // A recording uploaded while a bucket was configured cannot be deleted from here: saying
    // it was would leave the caller's voice in the bucket behind a successful deletion.
    if (ref.startsWith(S3_REF_PREFIX)) {
      throw new Error(`recording ${ref} is in a bucket, but PARLEY_RECORDINGS_S3_BUCKET is unset: configure the bucket to delete it`);
    }
    await rm(ref, { force: true });
  }

  async exists(ref: string): Promise<boolean> {
    if (ref.startsWith(S3_REF_PREFIX)) return false;
    return (await stat(ref).catch(() => null))?.isFile() ?? false;
  }
}
