import { eventToDigit, parseTelephoneEvent, type DtmfDigit } from "./dtmf-event.js";
import type { RtpPacket } from "./rtp-packet.js";

/**
 * Turns RFC 4733 telephone-event packets into digits, one per key press.
 *
 * An event is identified by its SSRC and RTP timestamp (every report of one event carries the
 * timestamp of its start), so the digit is reported on the first packet of an event that
 * arrives, whichever it is: a lost start packet does not lose the digit, and the update and
 * the three end packets do not repeat it. A report older than the newest event seen (a late
 * copy of an end packet) is ignored too.
 */
export class DtmfReceiver {
  private last: { ssrc: number; timestamp: number } | undefined;

  /** The digit this packet starts, or null (a later report of a known event, a non-digit event, a short payload). */
  receive(packet: RtpPacket): DtmfDigit | null {
    const report = parseTelephoneEvent(packet.payload);
    if (!report) return null;
    const last = this.last;
    if (last && last.ssrc === packet.ssrc && !isNewer(packet.timestamp, last.timestamp)) return null;
    this.last = { ssrc: packet.ssrc, timestamp: packet.timestamp };
    return eventToDigit(report.event);
  }
}

/** RFC 1982 serial number order for 32-bit RTP timestamps. */
function isNewer(timestamp: number, than: number): boolean {
  const delta = (timestamp - than) >>> 0;
  return delta !== 0 && delta < 0x80000000;
}
