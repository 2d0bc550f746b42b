import { describe, expect, it } from "vitest";
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from "../../../../../engine/transports/sip/rtp-packet.js";

const PACKET: RtpPacket = {
  marker: true,
  payloadType: 8,
  sequence: 65535,
  timestamp: 0xfffffff0,
  ssrc: 0xdeadbeef,
  csrcs: [],
  payload: Uint8Array.from({ length: 160 }, (_, i) => i),
};

function parsed(bytes: Uint8Array): RtpPacket {
  const result = parseRtpPacket(bytes);
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  return result.packet;
}

function rejection(bytes: Uint8Array): string {
  const result = parseRtpPacket(bytes);
  return result.ok ? "accepted" : result.reason;
}

describe("RTP packets", () => {
  it("round-trips the fixed header, CSRCs and payload", () => {
    const bytes = serializeRtpPacket(PACKET);
    expect(Array.from(bytes.subarray(0, 12))).toEqual([0x80, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0xde, 0xad, 0xbe, 0xef]);
    expect(parsed(bytes)).toEqual(PACKET);
    const mixed = { ...PACKET, marker: false, payloadType: 0, csrcs: [1, 0xffffffff] };
    const mixedBytes = serializeRtpPacket(mixed);
    expect(mixedBytes[0]).toBe(0x82);
    expect(parsed(mixedBytes)).toEqual(mixed);
  });

  it("skips a header extension and strips padding", () => {
    const payload = Uint8Array.of(1, 2, 3);
    const bytes = Uint8Array.of(
      0xb0, 0x00, 0x00, 0x07, 0, 0, 0, 160, 0, 0, 0, 9, // V=2 P X, CC=0, PT 0, seq 7, ts 160, ssrc 9
      0xbe, 0xde, 0x00, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // extension: 2 words
      ...payload,
      0, 0, 3, // 3 bytes of padding, counted by the last
    );
    const packet = parsed(bytes);
    expect(packet).toMatchObject({ marker: false, payloadType: 0, sequence: 7, timestamp: 160, ssrc: 9, csrcs: [] });
    expect(Array.from(packet.payload)).toEqual([1, 2, 3]);
  });

  it("rejects malformed datagrams with a reason instead of throwing", () => {
    const good = serializeRtpPacket(PACKET);
    expect(rejection(good.subarray(0, 11))).toBe("too_short");
    expect(rejection(Uint8Array.of(0x40, ...good.subarray(1)))).toBe("bad_version");
    expect(rejection(Uint8Array.of(0x81, 200, 0, 6, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0))).toBe("rtcp");
    expect(rejection(Uint8Array.of(0x83, ...good.subarray(1, 12), 0, 0, 0, 1))).toBe("truncated"); // 3 CSRCs announced, 1 present
    expect(rejection(Uint8Array.of(0x90, ...good.subarray(1, 12), 0xbe, 0xde, 0, 5, 0, 0, 0, 0))).toBe("truncated"); // extension of 5 words, 1 present
    expect(rejection(Uint8Array.of(0xa0, ...good.subarray(1, 12), 1, 2, 0))).toBe("bad_padding");
    expect(rejection(Uint8Array.of(0xa0, ...good.subarray(1, 12), 1, 2, 9))).toBe("bad_padding");
  });
});
