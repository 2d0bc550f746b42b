import { describe, expect, it } from "vitest";
import { WAV_UNKNOWN_SIZE, WavFormatError, deinterleave, encodeWav, parseWav } from "../../../../engine/audio/wav.js";

function chunk(id: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, "ascii");
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body, Buffer.alloc(body.length % 2)]);
}

function fmt(tag: number, channels: number, sampleRate: number, bits: number, extensibleSubFormat?: number): Buffer {
  const body = Buffer.alloc(extensibleSubFormat === undefined ? 16 : 40);
  const blockAlign = (channels * bits) / 8;
  body.writeUInt16LE(tag, 0);
  body.writeUInt16LE(channels, 2);
  body.writeUInt32LE(sampleRate, 4);
  body.writeUInt32LE(sampleRate * blockAlign, 8);
  body.writeUInt16LE(blockAlign, 12);
  body.writeUInt16LE(bits, 14);
  if (extensibleSubFormat !== undefined) {
    body.writeUInt16LE(22, 16);
    body.writeUInt16LE(bits, 18);
    body.writeUInt32LE(channels === 1 ? 4 : 3, 20);
    body.writeUInt16LE(extensibleSubFormat, 24);
  }
  return chunk("fmt ", body);
}

function riff(...chunks: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from("WAVE", "ascii"), ...chunks]);
  const header = Buffer.alloc(8);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
}

function pcm(values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 2);
  values.forEach((value, i) => out.writeInt16LE(value, i * 2));
  return out;
}

describe("WAV", () => {
  it("writes a canonical 44-byte header", () => {
    const file = encodeWav({ sampleRate: 8000, channels: 1, samples: Int16Array.from([1, -2, 3]) });
    expect(file.length).toBe(50);
    expect(file.toString("ascii", 0, 4)).toBe("RIFF");
    expect(file.readUInt32LE(4)).toBe(42);
    expect(file.toString("ascii", 8, 16)).toBe("WAVEfmt ");
    expect([file.readUInt32LE(16), file.readUInt16LE(20), file.readUInt16LE(22)]).toEqual([16, 1, 1]);
    expect([file.readUInt32LE(24), file.readUInt32LE(28), file.readUInt16LE(32), file.readUInt16LE(34)]).toEqual([8000, 16000, 2, 16]);
    expect(file.toString("ascii", 36, 40)).toBe("data");
    expect(file.readUInt32LE(40)).toBe(6);
    expect([file.readInt16LE(44), file.readInt16LE(46), file.readInt16LE(48)]).toEqual([1, -2, 3]);
  });

  it("round-trips mono and stereo", () => {
    const mono = { sampleRate: 16000, channels: 1, samples: Int16Array.from([0, 32767, -32768, 5]) };
    const stereo = { sampleRate: 48000, channels: 2, samples: Int16Array.from([1, -1, 2, -2, 3, -3]) };
    for (const audio of [mono, stereo]) {
      const parsed = parseWav(encodeWav(audio));
      expect(parsed.sampleRate).toBe(audio.sampleRate);
      expect(parsed.channels).toBe(audio.channels);
      expect(Array.from(parsed.samples)).toEqual(Array.from(audio.samples));
    }
  });

  it("skips LIST and other chunks, odd-sized ones included", () => {
    const file = riff(
      chunk("LIST", Buffer.from("INFOISFT\x05\x00\x00\x00test\x00", "latin1")), // odd size: padded
      fmt(1, 2, 22050, 16),
      chunk("fact", Buffer.alloc(4)),
      chunk("data", pcm([10, 20, 30, 40])),
      chunk("id3 ", Buffer.from("trailing")),
    );
    const parsed = parseWav(file);
    expect(parsed).toMatchObject({ sampleRate: 22050, channels: 2 });
    expect(Array.from(parsed.samples)).toEqual([10, 20, 30, 40]);
    expect(deinterleave(parsed.samples, 2).map((channel) => Array.from(channel))).toEqual([
      [10, 30],
      [20, 40],
    ]);
  });

  it("reads samples at an odd offset in the file", () => {
    const file = riff(chunk("junk", Buffer.alloc(3)), fmt(1, 1, 8000, 16), chunk("data", pcm([-300, 300])));
    expect(Array.from(parseWav(file).samples)).toEqual([-300, 300]);
    // And inside a larger buffer at an odd byte offset.
    const shifted = Buffer.concat([Buffer.alloc(1), file]).subarray(1);
    expect(Array.from(parseWav(shifted).samples)).toEqual([-300, 300]);
  });

  it("accepts WAVE_FORMAT_EXTENSIBLE with a PCM sub-format", () => {
    const parsed = parseWav(riff(fmt(0xfffe, 1, 16000, 16, 1), chunk("data", pcm([7, 8]))));
    expect(Array.from(parsed.samples)).toEqual([7, 8]);
  });

  it("reads a file whose data size is unknown or runs past the end, up to the last whole frame", () => {
    const file = encodeWav({ sampleRate: 8000, channels: 2, samples: Int16Array.from([1, 2, 3, 4, 5, 6]) });
    file.writeUInt32LE(WAV_UNKNOWN_SIZE, 4);
    file.writeUInt32LE(WAV_UNKNOWN_SIZE, 40);
    expect(Array.from(parseWav(file).samples)).toEqual([1, 2, 3, 4, 5, 6]);
    // A crash in the middle of a write: a partial stereo frame at the end is ignored.
    expect(Array.from(parseWav(file.subarray(0, file.length - 3)).samples)).toEqual([1, 2, 3, 4]);
  });

  it.each([
    [fmt(3, 1, 16000, 32), /IEEE float.*only 16-bit PCM/],
    [fmt(7, 1, 8000, 8), /mu-law/],
    [fmt(6, 1, 8000, 8), /A-law/],
    [fmt(0x55, 2, 44100, 0), /MP3/],
    [fmt(1, 1, 8000, 8), /8-bit PCM; only 16-bit PCM/],
    [fmt(1, 1, 44100, 24), /24-bit/],
    [fmt(0xfffe, 1, 48000, 32, 3), /IEEE float/],
    [fmt(1, 3, 8000, 16), /mono or stereo, got 3 channels/],
  ])("refuses non-PCM16 audio with a clear error (%#)", (format, message) => {
    const file = riff(format, chunk("data", Buffer.alloc(12)));
    expect(() => parseWav(file)).toThrow(WavFormatError);
    expect(() => parseWav(file)).toThrow(message);
  });

  it("refuses files that are not WAV or miss a chunk", () => {
    expect(() => parseWav(Buffer.from("ID3\x03 not a wav at all"))).toThrow(/not a WAV file/);
    expect(() => parseWav(riff(fmt(1, 1, 8000, 16)))).toThrow(/no data chunk/);
    expect(() => parseWav(riff(chunk("data", pcm([1]))))).toThrow(/no fmt chunk/);
  });

  it("refuses to encode samples that do not split into the channels", () => {
    expect(() => encodeWav({ sampleRate: 8000, channels: 2, samples: new Int16Array(3) })).toThrow(RangeError);
  });
});
