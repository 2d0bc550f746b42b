/**
 * The RTP fixed header (RFC 3550 section 5.1): parse and serialize. Parsing never throws:
 * it reads datagrams straight off a socket, so a bad one comes back as a reason to count.
 * Header extensions and padding are skipped, never written; CSRCs are kept.
 */
export interface RtpPacket {
  marker: boolean;
  /** 0..127 */
  payloadType: number;
  /** 0..65535, wraps. */
  sequence: number;
  /** 0..2^32-1, wraps; in units of the payload's clock rate. */
  timestamp: number;
  ssrc: number;
  csrcs: number[];
  /** A view into the datagram (not a copy). */
  payload: Uint8Array;
}

export const RTP_REJECTIONS = [
  /** Shorter than the 12-byte fixed header. */
  "too_short",
  /** Version is not 2 (STUN, ZRTP or garbage). */
  "bad_version",
  /** An RTCP packet (payload types 72-76 with the marker, i.e. RTCP types 200-204) sharing the port. */
  "rtcp",
  /** CSRC list or header extension runs past the end. */
  "truncated",
  /** The padding count is zero or longer than the payload. */
  "bad_padding",
] as const;
export type RtpRejection = (typeof RTP_REJECTIONS)[number];

export type RtpParseResult = { ok: true; packet: RtpPacket } | { ok: false; reason: RtpRejection };

const FIXED_HEADER_BYTES = 12;

export function parseRtpPacket(data: Uint8Array): RtpParseResult {
  if (data.byteLength < FIXED_HEADER_BYTES) return { ok: false, reason: "too_short" };
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const first = data[0]!;
  const second = data[1]!;
  if (first >> 6 !== 2) return { ok: false, reason: "bad_version" };
  if (second >= 200 && second <= 204) return { ok: false, reason: "rtcp" };
  const csrcCount = first & 0x0f;
  let offset = FIXED_HEADER_BYTES + csrcCount * 4;
  if (offset > data.byteLength) return { ok: false, reason: "truncated" };
  const csrcs: number[] = [];
  for (let i = 0; i < csrcCount; i++) csrcs.push(view.getUint32(FIXED_HEADER_BYTES + i * 4));
  if (first & 0x10) {
    // Extension: 16-bit profile id, 16-bit length in 32-bit words, then the words.
    if (offset + 4 > data.byteLength) return { ok: false, reason: "truncated" };
    offset += 4 + view.getUint16(offset + 2) * 4;
    if (offset > data.byteLength) return { ok: false, reason: "truncated" };
  }
  let end = data.byteLength;
  if (first & 0x20) {
    // The last byte counts the padding, itself included.
    const padding = data[end - 1]!;
    if (padding === 0 || end - padding < offset) return { ok: false, reason: "bad_padding" };
    end -= padding;
  }
  return {
    ok: true,
    packet: {
      marker: (second & 0x80) !== 0,
      payloadType: second & 0x7f,
      sequence: view.getUint16(2),
      timestamp: view.getUint32(4),
      ssrc: view.getUint32(8),
      csrcs,
      payload: data.subarray(offset, end),
    },
  };
}

export function serializeRtpPacket(packet: RtpPacket): Uint8Array {
  if (packet.csrcs.length > 15) throw new RangeError("an RTP packet carries at most 15 CSRCs");
  const headerBytes = FIXED_HEADER_BYTES + packet.csrcs.length * 4;
  const out = new Uint8Array(headerBytes + packet.payload.byteLength);
  const view = new DataView(out.buffer);
  out[0] = 0x80 | packet.csrcs.length;
  out[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  view.setUint16(2, packet.sequence & 0xffff);
  view.setUint32(4, packet.timestamp >>> 0);
  view.setUint32(8, packet.ssrc >>> 0);
  packet.csrcs.forEach((csrc, i) => view.setUint32(FIXED_HEADER_BYTES + i * 4, csrc >>> 0));
  out.set(packet.payload, headerBytes);
  return out;
}
