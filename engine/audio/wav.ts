import { bytesToPcm16, pcm16ToBytes } from "./pcm16.js";

/**
 * PCM16 WAV (RIFF/WAVE), mono or stereo: parse and encode in memory. Parsing walks the chunk
 * list, so LIST/INFO, fact, cue and other chunks before or after `fmt ` and `data` are
 * skipped; anything but 16-bit integer PCM is refused with an error that names the encoding.
 * A `data` chunk whose size runs past the end of the file is read up to the end (a file
 * still being written by WavFileWriter, or left behind by a crash, declares 0xFFFFFFFF).
 */

export const WAV_CHANNEL_COUNTS = [1, 2] as const;

export interface WavFormat {
  sampleRate: number;
  /** 1 (mono) or 2 (stereo). */
  channels: number;
}

export interface WavAudio extends WavFormat {
  /** Interleaved samples (left, right, left, ... for stereo). */
  samples: Int16Array;
}

export const WAV_HEADER_BYTES = 44;
/** Size written while the length is unknown: readers take it as "to the end of the file". */
export const WAV_UNKNOWN_SIZE = 0xffffffff;

const FORMAT_NAMES: Record<number, string> = {
  0x0002: "Microsoft ADPCM",
  0x0003: "IEEE float",
  0x0006: "A-law",
  0x0007: "mu-law",
  0x0011: "IMA ADPCM",
  0x0031: "GSM 6.10",
  0x0055: "MP3",
};
const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

export class WavFormatError extends Error {
  override readonly name = "WavFormatError";
}

/**
 * Reads a PCM16 WAV file's bytes. The samples may share memory with `bytes` (see
 * bytesToPcm16); a trailing partial sample frame is ignored.
 */
export function parseWav(bytes: Uint8Array): WavAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || fourCc(view, 0) !== "RIFF" || fourCc(view, 8) !== "WAVE") {
    throw new WavFormatError("not a WAV file (no RIFF/WAVE header)");
  }
  let format: (WavFormat & { blockAlign: number }) | undefined;
  let data: { offset: number; size: number } | undefined;
  for (let offset = 12; offset + 8 <= bytes.byteLength && !data; ) {
    const id = fourCc(view, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") format = parseFormat(view, body, Math.min(size, bytes.byteLength - body));
    else if (id === "data") data = { offset: body, size: Math.min(size, bytes.byteLength - body) };
    offset = body + size + (size % 2); // chunks are padded to even sizes
  }
  if (!format) throw new WavFormatError("WAV file has no fmt chunk before its data");
  if (!data) throw new WavFormatError("WAV file has no data chunk");
  const usable = data.size - (data.size % format.blockAlign);
  const samples = bytesToPcm16(bytes.subarray(data.offset, data.offset + usable));
  return { sampleRate: format.sampleRate, channels: format.channels, samples };
}

/** A complete WAV file (44-byte header + data) for the audio. */
export function encodeWav(audio: WavAudio): Buffer {
  checkInterleaved(audio.samples, audio.channels);
  return Buffer.concat([wavHeader(audio, audio.samples.byteLength), pcm16ToBytes(audio.samples)]);
}

/** The canonical 44-byte header; `dataBytes` may be WAV_UNKNOWN_SIZE. */
export function wavHeader(format: WavFormat, dataBytes: number): Buffer {
  checkFormat(format);
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  const blockAlign = format.channels * 2;
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(riffSize(dataBytes), 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  header.writeUInt16LE(format.channels, 22);
  header.writeUInt32LE(format.sampleRate, 24);
  header.writeUInt32LE(format.sampleRate * blockAlign, 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(Math.min(dataBytes, WAV_UNKNOWN_SIZE), 40);
  return header;
}

/** The RIFF chunk size for a canonical file with `dataBytes` of data (saturates at the 4 GiB limit). */
export function riffSize(dataBytes: number): number {
  return Math.min(WAV_HEADER_BYTES - 8 + dataBytes, WAV_UNKNOWN_SIZE);
}

/** Splits interleaved samples into one array per channel. */
export function deinterleave(samples: Int16Array, channels: number): Int16Array[] {
  checkInterleaved(samples, channels);
  const frames = samples.length / channels;
  const out = Array.from({ length: channels }, () => new Int16Array(frames));
  for (let i = 0; i < frames; i++) for (let c = 0; c < channels; c++) out[c]![i] = samples[i * channels + c]!;
  return out;
}

export function checkFormat(format: WavFormat): void {
  if (!(WAV_CHANNEL_COUNTS as readonly number[]).includes(format.channels)) {
    throw new WavFormatError(`WAV must be mono or stereo, got ${format.channels} channels`);
  }
  if (!Number.isInteger(format.sampleRate) || format.sampleRate <= 0) throw new WavFormatError(`bad WAV sample rate ${format.sampleRate}`);
}

export function checkInterleaved(samples: Int16Array, channels: number): void {
  if (samples.length % channels !== 0) throw new RangeError(`${samples.length} samples do not split into ${channels} channels`);
}

function parseFormat(view: DataView, offset: number, size: number): WavFormat & { blockAlign: number } {
  if (size < 16) throw new WavFormatError("WAV fmt chunk is too short");
  let tag = view.getUint16(offset, true);
  const channels = view.getUint16(offset + 2, true);
  const sampleRate = view.getUint32(offset + 4, true);
  const blockAlign = view.getUint16(offset + 12, true);
  const bits = view.getUint16(offset + 14, true);
  // WAVE_FORMAT_EXTENSIBLE keeps the real format in the first two bytes of its sub-format GUID.
  if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 26) tag = view.getUint16(offset + 24, true);
  if (tag !== WAVE_FORMAT_PCM) {
    const name = FORMAT_NAMES[tag] ?? "unknown";
    throw new WavFormatError(`WAV encoding is ${name} (format tag 0x${tag.toString(16).padStart(4, "0")}); only 16-bit PCM is supported`);
  }
  if (bits !== 16) throw new WavFormatError(`WAV is ${bits}-bit PCM; only 16-bit PCM is supported`);
  const format = { sampleRate, channels };
  checkFormat(format);
  if (blockAlign !== channels * 2) throw new WavFormatError(`WAV block align ${blockAlign} does not match ${channels}-channel 16-bit PCM`);
  return { ...format, blockAlign };
}

function fourCc(view: DataView, offset: number): string {
  return String.fromCharCode(view.getUint8(offset), view.getUint8(offset + 1), view.getUint8(offset + 2), view.getUint8(offset + 3));
}
