import { digitToEvent, serializeTelephoneEvent } from "./dtmf-event.js";

/**
 * The packets that send one DTMF digit as an RFC 4733 event, and when to send them.
 *
 * A report goes out every `intervalMs` (50 ms) from the start of the tone, each carrying the
 * duration so far, rounded up to the end of its interval; the first one carries the RTP
 * marker. When the tone is over, the final report (E bit, full duration) goes out three
 * times at the same interval so that one lost packet does not lose the end. Every packet
 * takes a new sequence number but shares the event's timestamp: the sender (the RTP
 * session) supplies both.
 */
export interface DtmfToneOptions {
  /** Tone length (default 100 ms, 40 to 5000). */
  durationMs?: number;
  /** Power level as -dBm0 (default 10, 0 to 63). */
  volume?: number;
  /** Time between reports (default 50 ms). */
  intervalMs?: number;
}

export interface PlannedEventPacket {
  /** When to send it, in ms after the first packet. */
  atMs: number;
  marker: boolean;
  /** The 4-byte telephone-event payload. */
  payload: Uint8Array;
}

export const FINAL_REPORT_COPIES = 3;

export function planDtmfEvent(digit: string, options: DtmfToneOptions = {}, clockRate = 8000): PlannedEventPacket[] {
  const event = digitToEvent(digit);
  const durationMs = options.durationMs ?? 100;
  const volume = options.volume ?? 10;
  const intervalMs = options.intervalMs ?? 50;
  if (!(durationMs >= 40 && durationMs <= 5000)) throw new RangeError(`DTMF duration out of range: ${durationMs} ms`);
  if (!Number.isInteger(volume) || volume < 0 || volume > 63) throw new RangeError(`DTMF volume out of range: ${volume}`);
  if (!(intervalMs > 0)) throw new RangeError(`DTMF report interval must be positive: ${intervalMs} ms`);
  const units = (ms: number) => Math.round((ms * clockRate) / 1000);
  const packets: PlannedEventPacket[] = [];
  let atMs = 0;
  for (; atMs < durationMs; atMs += intervalMs) {
    const duration = units(Math.min(atMs + intervalMs, durationMs));
    packets.push({ atMs, marker: atMs === 0, payload: serializeTelephoneEvent({ event, end: false, volume, duration }) });
  }
  const final = serializeTelephoneEvent({ event, end: true, volume, duration: units(durationMs) });
  for (let copy = 0; copy < FINAL_REPORT_COPIES; copy++, atMs += intervalMs) packets.push({ atMs, marker: false, payload: final });
  return packets;
}
