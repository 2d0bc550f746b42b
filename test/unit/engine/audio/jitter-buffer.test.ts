import { describe, expect, it } from "vitest";
import { JitterBuffer, type JitterRead, type RtpAudioPacket } from "../../../../engine/audio/jitter-buffer.js";

/** A 20 ms PCMU packet whose first two samples carry its sequence number. */
function packet(sequence: number): RtpAudioPacket {
  const samples = new Int16Array(160);
  samples[0] = sequence >> 8;
  samples[1] = (sequence & 0xff) + 1; // never silence
  return { sequence, timestamp: (sequence * 160) >>> 0, frame: { samples, sampleRate: 8000 } };
}

function describeRead(read: JitterRead | null): string {
  if (!read) return "-";
  if (read.concealed) return `silence@${read.sequence}`;
  const samples = read.frame.samples;
  return String(samples[0]! * 256 + samples[1]! - 1);
}

function readAll(buffer: JitterBuffer, times: number): string[] {
  return Array.from({ length: times }, () => describeRead(buffer.read()));
}

describe("JitterBuffer", () => {
  it("waits for the target depth, then plays out of order arrivals in order", () => {
    const buffer = new JitterBuffer({ depthMs: 60 });
    expect(buffer.insert(packet(11))).toBe("accepted");
    expect(buffer.read()).toBeNull();
    buffer.insert(packet(10));
    expect(buffer.read()).toBeNull(); // 40 ms buffered
    buffer.insert(packet(13));
    buffer.insert(packet(12));
    expect(buffer.bufferedMs).toBe(80);
    expect(readAll(buffer, 4)).toEqual(["10", "11", "12", "13"]);
    const read = buffer.read();
    expect(read).toBeNull();
    expect(buffer.stats).toMatchObject({ received: 4, played: 4, underruns: 1 });
  });

  it("carries timestamps and sequence numbers to the reader", () => {
    const buffer = new JitterBuffer({ depthMs: 20 });
    buffer.insert(packet(7));
    expect(buffer.read()).toMatchObject({ sequence: 7, timestamp: 1120, concealed: false });
  });

  it("fills a lost packet with one silence frame and counts it", () => {
    const buffer = new JitterBuffer({ depthMs: 60 });
    for (const sequence of [1, 2, 4, 5]) buffer.insert(packet(sequence));
    const reads = [buffer.read(), buffer.read(), buffer.read(), buffer.read(), buffer.read()];
    expect(reads.map(describeRead)).toEqual(["1", "2", "silence@3", "4", "5"]);
    const silence = reads[2]!;
    expect(silence.frame.samples.length).toBe(160);
    expect(silence.frame.sampleRate).toBe(8000);
    expect(silence.frame.samples.every((s) => s === 0)).toBe(true);
    expect(silence.timestamp).toBeNull();
    expect(buffer.stats.concealed).toBe(1);
  });

  it("drops late and duplicate packets", () => {
    const buffer = new JitterBuffer({ depthMs: 40 });
    buffer.insert(packet(1));
    buffer.insert(packet(3));
    expect(buffer.insert(packet(3))).toBe("duplicate");
    expect(readAll(buffer, 2)).toEqual(["1", "silence@2"]);
    expect(buffer.insert(packet(2))).toBe("late"); // its slot has been played as silence
    expect(buffer.insert(packet(1))).toBe("late"); // a copy of one already played
    expect(readAll(buffer, 1)).toEqual(["3"]);
    expect(buffer.stats).toMatchObject({ late: 2, duplicate: 1, played: 2, concealed: 1 });
  });

  it("accepts a packet older than the first one while still buffering", () => {
    const buffer = new JitterBuffer({ depthMs: 60 });
    buffer.insert(packet(101));
    buffer.insert(packet(102));
    buffer.insert(packet(100));
    expect(readAll(buffer, 3)).toEqual(["100", "101", "102"]);
  });

  it("orders across the sequence wrap-around at 65535", () => {
    const buffer = new JitterBuffer({ depthMs: 60 });
    for (const sequence of [65534, 0, 65535, 2, 1]) buffer.insert(packet(sequence));
    expect(readAll(buffer, 5)).toEqual(["65534", "65535", "0", "1", "2"]);
    expect(buffer.insert(packet(65535))).toBe("late");
    buffer.insert(packet(3));
    buffer.insert(packet(4));
    buffer.insert(packet(5));
    expect(readAll(buffer, 3)).toEqual(["3", "4", "5"]);
  });

  it("wraps around with a packet lost right at the boundary", () => {
    const buffer = new JitterBuffer({ depthMs: 40 });
    for (const sequence of [65534, 65535, 1]) buffer.insert(packet(sequence));
    expect(readAll(buffer, 4)).toEqual(["65534", "65535", "silence@0", "1"]);
  });

  it("rebuffers to the target depth after running empty", () => {
    const buffer = new JitterBuffer({ depthMs: 40 });
    buffer.insert(packet(1));
    buffer.insert(packet(2));
    expect(readAll(buffer, 3)).toEqual(["1", "2", "-"]);
    buffer.insert(packet(3));
    expect(buffer.read()).toBeNull(); // 20 ms is not enough to start again
    buffer.insert(packet(4));
    expect(readAll(buffer, 2)).toEqual(["3", "4"]);
    expect(buffer.stats.underruns).toBe(1);
  });

  it("skips packets lost during an underrun instead of playing their silence late", () => {
    const buffer = new JitterBuffer({ depthMs: 40 });
    buffer.insert(packet(1));
    buffer.insert(packet(2));
    expect(readAll(buffer, 4)).toEqual(["1", "2", "-", "-"]);
    buffer.insert(packet(6));
    buffer.insert(packet(7));
    expect(readAll(buffer, 2)).toEqual(["6", "7"]);
    expect(buffer.stats.concealed).toBe(0);
  });

  it("drops the oldest audio when it holds more than maxDepthMs", () => {
    const buffer = new JitterBuffer({ depthMs: 40, maxDepthMs: 100 });
    for (let sequence = 1; sequence <= 8; sequence++) buffer.insert(packet(sequence));
    expect(buffer.bufferedMs).toBe(100);
    expect(buffer.stats.overflow).toBe(3);
    expect(readAll(buffer, 5)).toEqual(["4", "5", "6", "7", "8"]);
    expect(buffer.insert(packet(3))).toBe("late");
  });

  describe("silence suppression (DTX): talkspurts separated by pauses", () => {
    /** A packet of a talkspurt after a pause: the timestamp is ahead by the pause, the marker set on its first packet. */
    const resumed = (sequence: number, pauseSamples: number, marker = false): RtpAudioPacket => {
      const base = packet(sequence);
      return { ...base, timestamp: (base.timestamp + pauseSamples) >>> 0, marker };
    };

    it("plays a talkspurt that follows a pause in full and in order, buffering up to the depth again first", () => {
      const buffer = new JitterBuffer({ depthMs: 40 });
      buffer.insert(packet(1));
      buffer.insert(packet(2));
      expect(readAll(buffer, 2)).toEqual(["1", "2"]);
      expect(readAll(buffer, 50)).toEqual(Array(50).fill("-")); // a second with no packets
      buffer.insert(resumed(3, 8000, true));
      expect(buffer.read()).toBeNull();
      buffer.insert(resumed(4, 8000));
      buffer.insert(resumed(5, 8000));
      expect(readAll(buffer, 3)).toEqual(["3", "4", "5"]);
      expect(buffer.stats).toMatchObject({ played: 5, concealed: 0, late: 0, talkspurts: 1 });
    });

    it("skips the sequence numbers comfort noise used up before a talkspurt instead of concealing them, and re-primes", () => {
      const buffer = new JitterBuffer({ depthMs: 60 });
      for (const sequence of [1, 2, 3]) buffer.insert(packet(sequence));
      expect(readAll(buffer, 1)).toEqual(["1"]);
      buffer.insert(packet(4));
      expect(readAll(buffer, 1)).toEqual(["2"]);
      // 5 and 6 were comfort noise packets (not buffered); the talkspurt restarts before 3 and 4 have played.
      buffer.insert(resumed(7, 1600, true));
      expect(readAll(buffer, 3)).toEqual(["3", "4", "-"]); // the end of the last talkspurt, then buffering
      buffer.insert(resumed(8, 1600));
      expect(buffer.read()).toBeNull();
      buffer.insert(resumed(9, 1600));
      expect(readAll(buffer, 3)).toEqual(["7", "8", "9"]);
      expect(buffer.stats).toMatchObject({ played: 7, concealed: 0, late: 0, talkspurts: 1 });
    });

    it("spots a talkspurt whose marker packet was lost by its timestamp jump", () => {
      const buffer = new JitterBuffer({ depthMs: 40 });
      for (const sequence of [1, 2, 3]) buffer.insert(packet(sequence));
      expect(readAll(buffer, 1)).toEqual(["1"]);
      // 4 (the marker packet) was lost; 5 is 600 ms later than the sequence numbers account for.
      buffer.insert(resumed(5, 4800));
      expect(readAll(buffer, 3)).toEqual(["2", "3", "-"]);
      buffer.insert(resumed(6, 4800));
      expect(readAll(buffer, 2)).toEqual(["5", "6"]);
      expect(buffer.stats).toMatchObject({ concealed: 0, talkspurts: 1 });
    });

    it("still conceals a packet lost inside a talkspurt (no timestamp jump)", () => {
      const buffer = new JitterBuffer({ depthMs: 40 });
      for (const sequence of [1, 2, 4]) buffer.insert(packet(sequence));
      expect(readAll(buffer, 4)).toEqual(["1", "2", "silence@3", "4"]);
      expect(buffer.stats).toMatchObject({ concealed: 1, talkspurts: 0 });
    });
  });

  it("refuses sequence numbers outside 16 bits", () => {
    expect(() => new JitterBuffer().insert(packet(65536))).toThrow(RangeError);
  });
});
