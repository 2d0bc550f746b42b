import { open, rm, type FileHandle } from "node:fs/promises";
import { pcm16ToBytes } from "./pcm16.js";
import { WAV_HEADER_BYTES, WAV_UNKNOWN_SIZE, checkInterleaved, riffSize, wavHeader, type WavFormat } from "./wav.js";

/**
 * Writes a PCM16 WAV file incrementally. The header goes out first with placeholder sizes
 * (0xFFFFFFFF, "unknown length") and `close()` rewrites them with the real ones. If the
 * process dies before `close()`, the file still holds a valid header and every sample
 * written so far: parseWav (and tools that treat the placeholder as "to the end of the
 * file", such as ffmpeg and sox) read it up to the last completed write.
 *
 * Writes are queued in order without blocking the caller; the first I/O error (a full disk:
 * ENOSPC, EFBIG, EIO) is thrown by the next `write()`, by `flush()` and by `close()`. A short
 * write (what a filling disk often gives first) is continued until it fails. Sizes saturate at
 * the format's 4 GiB limit.
 */
export interface WavFileInfo {
  path: string;
  /** Sample frames (one sample per channel) written. */
  frames: number;
  dataBytes: number;
}

export class WavFileWriter {
  readonly path: string;
  readonly format: Readonly<WavFormat>;
  private readonly handle: FileHandle;
  private position = WAV_HEADER_BYTES;
  private pending: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;

  private constructor(path: string, format: WavFormat, handle: FileHandle) {
    this.path = path;
    this.format = Object.freeze({ ...format });
    this.handle = handle;
  }

  /** Creates (or truncates) the file, readable by its owner only (recordings are private), and writes the placeholder header. */
  static async open(path: string, format: WavFormat): Promise<WavFileWriter> {
    const header = wavHeader(format, WAV_UNKNOWN_SIZE);
    const handle = await open(path, "w", 0o600);
    try {
      await writeFully(handle, header, 0);
    } catch (error) {
      // Not even the header fits: leave no empty file behind.
      await handle.close();
      await rm(path, { force: true }).catch(() => undefined);
      throw error;
    }
    return new WavFileWriter(path, format, handle);
  }

  /** Appends interleaved samples; they are copied, so the caller may reuse the array. */
  write(samples: Int16Array): void {
    if (this.closed) throw new Error(`WAV writer for ${this.path} is closed`);
    if (this.failure) throw this.failure;
    checkInterleaved(samples, this.format.channels);
    if (samples.length === 0) return;
    const bytes = Buffer.from(pcm16ToBytes(samples));
    const position = this.position;
    this.position += bytes.length;
    this.pending = this.pending.then(async () => {
      if (this.failure) return;
      try {
        await writeFully(this.handle, bytes, position);
      } catch (error) {
        this.failure = error instanceof Error ? error : new Error(String(error));
      }
    });
  }

  /** Resolves when every write queued so far has reached the file (the OS, not necessarily the disk). */
  async flush(): Promise<void> {
    await this.pending;
    if (this.failure) throw this.failure;
  }

  /**
   * Gives up on the file after a failure: waits for queued writes (their errors are moot now),
   * closes it and deletes it, so a recording cut short by a full disk leaves no half file that
   * nothing refers to. Never rejects.
   */
  async discard(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pending;
    await this.handle.close().catch(() => undefined);
    await rm(this.path, { force: true }).catch(() => undefined);
  }

  /** Waits for queued writes, writes the real sizes into the header and closes the file. */
  async close(): Promise<WavFileInfo> {
    if (this.closed) throw new Error(`WAV writer for ${this.path} is closed`);
    this.closed = true;
    const dataBytes = this.position - WAV_HEADER_BYTES;
    try {
      await this.pending;
      if (this.failure) throw this.failure;
      const sizes = Buffer.alloc(4);
      sizes.writeUInt32LE(riffSize(dataBytes), 0);
      await this.handle.write(sizes, 0, 4, 4);
      sizes.writeUInt32LE(Math.min(dataBytes, WAV_UNKNOWN_SIZE), 0);
      await this.handle.write(sizes, 0, 4, 40);
    } finally {
      await this.handle.close();
    }
    return { path: this.path, frames: dataBytes / (2 * this.format.channels), dataBytes };
  }
}

/** Writes all of `bytes` at `position`, continuing after short writes; a write that makes no progress is an error. */
async function writeFully(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let offset = 0; offset < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, position + offset);
    if (bytesWritten <= 0) throw Object.assign(new Error("no space left: the write made no progress"), { code: "ENOSPC" });
    offset += bytesWritten;
  }
}
