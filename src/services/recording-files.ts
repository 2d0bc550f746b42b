import path from "node:path";

/** Where call recordings are written: `<data dir>/recordings/`. */
export function recordingsDir(dataDir: string): string {
  return path.join(dataDir, "recordings");
}

/** The recording of call `callId`: `<data dir>/recordings/<call id>.wav` (written as the call runs). */
export function recordingFile(dataDir: string, callId: string): string {
  return path.join(recordingsDir(dataDir), `${callId}.wav`);
}
