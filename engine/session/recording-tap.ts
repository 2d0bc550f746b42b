import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { AudioFrame } from "../audio/audio-frame.js";
import type { CallEvent } from "../call-events.js";
import { CallRecorder } from "../recording/call-recorder.js";

/** What the tap reports: the recording made, or given up on (once). */
export type RecordingEvent = Extract<CallEvent, { type: "recording" | "recording_failed" }>;

/**
 * A call's stereo recording as the session feeds it: opened at the start, each side's audio
 * put at its place on the call's timeline, closed at the end. A disk problem (a full disk, a
 * file size limit) loses the recording, never the call: the file is deleted and
 * `recording_failed` is reported once; the tap then takes nothing more.
 */
export class RecordingTap {
  private recorder: CallRecorder | undefined;
  /** The file being opened: closing waits for it. */
  private opening: Promise<void> | undefined;
  /** A recording given up on after a failed write: its file is being closed and deleted. */
  private discarding: Promise<void> | undefined;

  constructor(private readonly report: (event: RecordingEvent) => void) {}

  /** Opens the recording at `file`; a failure (a full disk) leaves the call unrecorded, not ended. */
  open(file: string): Promise<void> {
    this.opening = this.openRecorder(file);
    return this.opening;
  }

  /** Puts audio into the recording; a write that fails stops the recording and nothing else. */
  record(side: "caller" | "agent", frame: AudioFrame, atMs: number): void {
    const recorder = this.recorder;
    if (!recorder) return;
    try {
      if (side === "caller") recorder.writeCaller(frame, atMs);
      else recorder.writeAgent(frame, atMs);
    } catch (err) {
      this.failed(err, recorder);
    }
  }

  /**
   * Closes the recording (after its opening, or its discarding, has finished) and reports it;
   * null when there is none (not recorded, given up on, or lost as it was closed).
   */
  async close(): Promise<{ path: string; durationMs: number } | null> {
    await this.opening;
    await this.discarding;
    const recorder = this.recorder;
    if (!recorder) return null;
    this.recorder = undefined;
    try {
      const recording = await recorder.close();
      this.report({ type: "recording", path: recording.path, durationMs: recording.durationMs });
      return recording;
    } catch (err) {
      // A disk problem loses the recording (close() deleted the file), not the call's transcript and end.
      this.failed(err, undefined);
      return null;
    }
  }

  private async openRecorder(file: string): Promise<void> {
    try {
      // Owner-only, like the recordings in it (the control plane tightens older directories).
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      const recorder = new CallRecorder({ path: file });
      await recorder.open();
      this.recorder = recorder;
    } catch (err) {
      this.failed(err, undefined);
    }
  }

  /**
   * The recording cannot go on: it stops, its file is deleted (see CallRecorder.discard), and
   * the owner hears of it once; the call itself goes on.
   */
  private failed(err: unknown, recorder: CallRecorder | undefined): void {
    if (recorder) {
      this.recorder = undefined;
      this.discarding = recorder.discard();
    }
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    this.report({ type: "recording_failed", message: err instanceof Error ? err.message : String(err), code: typeof code === "string" ? code : null });
  }
}
