import { rm } from "node:fs/promises";
import type { AudioFrame } from "../audio/audio-frame.js";
import { Resampler } from "../audio/resampler.js";
import { WavFileWriter } from "../audio/wav-file-writer.js";

/**
 * Records a call as a stereo 16-bit WAV file: caller on the left, agent on the right, both
 * resampled (high-quality resampler, whose delay is compensated) to one recording rate and
 * placed on one timeline: each chunk is written at its call time (ms since call start), and
 * whatever no chunk covers is silence. So a reply that starts 700 ms after the caller stopped
 * is 700 ms later in the file.
 *
 * Chunks that follow on from the side's previous chunk (within `JOIN_TOLERANCE_MS`) continue
 * one resampler stream, so timestamps that jitter by a few ms do not cut the audio; a larger
 * gap, an overlap or a new sample rate ends the stream and starts a new one at the chunk's own
 * time. A side's audio may arrive up to `holdMs` behind the other side's; the file is written
 * incrementally behind that window (see WavFileWriter for what a crash leaves), audio that
 * arrives later than that for a stretch already written is dropped, and a side silent for
 * longer than that counts as stopped (its stream ends, so nothing of it is held back).
 *
 * A write that fails (a full disk) is thrown by `writeCaller`/`writeAgent` (the next write
 * after it) or by `close()`; the owner then stops recording (`discard()`). A recording that
 * could not be completed is deleted: no half file is left that nothing refers to.
 */
export interface CallRecorderOptions {
  path: string;
  /** Rate of the recording (default 16000 Hz). */
  sampleRate?: number;
  /** How far one side may lag the other and still be placed (default 1000 ms). */
  holdMs?: number;
}

export interface RecordingResult {
  path: string;
  durationMs: number;
}

/** Chunks this close to where the previous one ended count as contiguous. */
const JOIN_TOLERANCE_MS = 10;
/** Write to disk in batches of at least this much audio. */
const WRITE_BATCH_MS = 250;

interface Stream {
  resampler: Resampler;
  sourceRate: number;
  startMs: number;
  /** Recording frame where the stream's first output sample goes. */
  startFrame: number;
  inputSamples: number;
  outputSamples: number;
}

interface Track {
  channel: number;
  stream: Stream | undefined;
  /** Recording frame just after the last sample placed on this side. */
  end: number;
}

export class CallRecorder {
  private readonly path: string;
  private readonly sampleRate: number;
  private readonly holdFrames: number;
  private readonly batchFrames: number;
  private writer: WavFileWriter | undefined;
  private closed = false;
  private readonly tracks: { caller: Track; agent: Track } = {
    caller: { channel: 0, stream: undefined, end: 0 },
    agent: { channel: 1, stream: undefined, end: 0 },
  };
  /** Interleaved stereo not yet written; frame 0 is recording frame `flushedFrames`. */
  private pending = new Int16Array(0);
  private flushedFrames = 0;

  constructor(options: CallRecorderOptions) {
    this.path = options.path;
    this.sampleRate = options.sampleRate ?? 16000;
    this.holdFrames = Math.round(((options.holdMs ?? 1000) * this.sampleRate) / 1000);
    this.batchFrames = Math.round((WRITE_BATCH_MS * this.sampleRate) / 1000);
  }

  /** Creates the file. */
  async open(): Promise<void> {
    if (this.writer || this.closed) throw new Error("call recorder already opened");
    this.writer = await WavFileWriter.open(this.path, { sampleRate: this.sampleRate, channels: 2 });
  }

  /** Records caller audio (left channel) that starts `atMs` after the call started. */
  writeCaller(frame: AudioFrame, atMs: number): void {
    this.write(this.tracks.caller, frame, atMs);
  }

  /** Records agent audio (right channel) that starts `atMs` after the call started. */
  writeAgent(frame: AudioFrame, atMs: number): void {
    this.write(this.tracks.agent, frame, atMs);
  }

  /** Resolves when everything already handed to the file has been written (audio in the hold window is not). */
  async flush(): Promise<void> {
    if (!this.writer) throw new Error("call recorder is not open");
    await this.writer.flush();
  }

  /** Drains both sides, writes the rest, finalises the WAV header and closes the file. */
  async close(): Promise<RecordingResult> {
    const writer = this.writer;
    if (!writer || this.closed) throw new Error("call recorder is not open");
    this.closed = true;
    this.endStream(this.tracks.caller);
    this.endStream(this.tracks.agent);
    let frames: number;
    try {
      this.flushThrough(Math.max(this.tracks.caller.end, this.tracks.agent.end));
      ({ frames } = await writer.close());
    } catch (err) {
      // The file is incomplete: nothing may point to it, so it goes.
      await rm(this.path, { force: true }).catch(() => undefined);
      throw err;
    }
    return { path: this.path, durationMs: Math.round((frames * 1000) / this.sampleRate) };
  }

  /**
   * Gives up on the recording after a write failed (a full disk): closes and deletes the file.
   * Never rejects; the recorder takes nothing more.
   */
  async discard(): Promise<void> {
    this.closed = true;
    await this.writer?.discard();
  }

  private write(track: Track, frame: AudioFrame, atMs: number): void {
    if (!this.writer || this.closed) throw new Error("call recorder is not open");
    let stream = track.stream;
    if (stream) {
      const expectedMs = stream.startMs + (stream.inputSamples * 1000) / stream.sourceRate;
      if (stream.sourceRate !== frame.sampleRate || Math.abs(atMs - expectedMs) > JOIN_TOLERANCE_MS) {
        this.endStream(track);
        stream = undefined;
      }
    }
    if (!stream) {
      const startFrame = Math.round((atMs * this.sampleRate) / 1000);
      // Everything more than the hold window before this chunk is final: write it out first.
      this.flushThrough(startFrame - this.holdFrames);
      stream = {
        resampler: new Resampler({ inputRate: frame.sampleRate, outputRate: this.sampleRate }),
        sourceRate: frame.sampleRate,
        startMs: atMs,
        startFrame,
        inputSamples: 0,
        outputSamples: 0,
      };
      track.stream = stream;
    }
    this.place(track, stream, stream.resampler.push(frame.samples));
    stream.inputSamples += frame.samples.length;
    const horizon = Math.max(this.tracks.caller.end, this.tracks.agent.end) - this.holdFrames;
    if (horizon - this.flushedFrames < this.batchFrames) return;
    // A side silent for the whole hold window has stopped: drain its resampler's held-back
    // tail before that stretch goes to disk.
    for (const other of [this.tracks.caller, this.tracks.agent]) if (other.end <= horizon) this.endStream(other);
    this.flushThrough(horizon);
  }

  private endStream(track: Track): void {
    const stream = track.stream;
    if (!stream) return;
    this.place(track, stream, stream.resampler.flush());
    track.stream = undefined;
  }

  private place(track: Track, stream: Stream, samples: Int16Array): void {
    const first = stream.startFrame + stream.outputSamples;
    stream.outputSamples += samples.length;
    if (samples.length === 0) return;
    const end = first + samples.length;
    this.ensurePending(end);
    // Audio for frames already on disk is dropped; later audio for a stretch overwrites.
    for (let frame = Math.max(first, this.flushedFrames); frame < end; frame++) {
      this.pending[(frame - this.flushedFrames) * 2 + track.channel] = samples[frame - first]!;
    }
    track.end = Math.max(track.end, end);
  }

  private ensurePending(endFrame: number): void {
    const needed = (endFrame - this.flushedFrames) * 2;
    if (needed <= this.pending.length) return;
    const grown = new Int16Array(Math.max(needed, this.pending.length * 2));
    grown.set(this.pending);
    this.pending = grown;
  }

  /** Writes every frame before `endFrame` (silence where nothing was placed). */
  private flushThrough(endFrame: number): void {
    const writer = this.writer!;
    const count = endFrame - this.flushedFrames;
    if (count <= 0) return;
    const buffered = Math.min(count * 2, this.pending.length);
    writer.write(this.pending.subarray(0, buffered));
    this.pending.copyWithin(0, buffered);
    this.pending.fill(0, this.pending.length - buffered);
    // A jump far ahead (a long silence on both sides) is written as silence without buffering it.
    const silence = new Int16Array(Math.min(count * 2 - buffered, this.sampleRate * 2));
    for (let left = count * 2 - buffered; left > 0; left -= silence.length) writer.write(silence.subarray(0, Math.min(left, silence.length)));
    this.flushedFrames = endFrame;
  }
}
