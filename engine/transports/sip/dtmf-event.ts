/**
 * The RFC 4733 telephone-event payload: 4 bytes per event report.
 *
 *   event (8) | E (1) R (1) volume (6) | duration (16)
 *
 * All packets of one event share the RTP timestamp of its start; `duration` grows with each
 * update (in RTP clock units since that start) and the E bit marks the last report.
 */
export interface TelephoneEvent {
  /** 0-9, 10 = *, 11 = #, 12-15 = A-D; 16 is flash (not a digit). */
  event: number;
  end: boolean;
  /** Power level as -dBm0, 0..63. */
  volume: number;
  /** 0..65535 timestamp units. */
  duration: number;
}

/** DTMF digits in event-code order: the index is the event code. */
export const DTMF_DIGITS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "#", "A", "B", "C", "D"] as const;
export type DtmfDigit = (typeof DTMF_DIGITS)[number];

export const TELEPHONE_EVENT_BYTES = 4;

/** The digit an event code stands for, or null for non-digit events (flash, tones). */
export function eventToDigit(event: number): DtmfDigit | null {
  return DTMF_DIGITS[event] ?? null;
}

/** The event code of a digit (a-d accepted as A-D); throws RangeError for anything else. */
export function digitToEvent(digit: string): number {
  const event = (DTMF_DIGITS as readonly string[]).indexOf(digit.toUpperCase());
  if (event < 0 || digit.length !== 1) throw new RangeError(`not a DTMF digit: ${JSON.stringify(digit)}`);
  return event;
}

/** Reads the first event report of a payload; null when it is too short. */
export function parseTelephoneEvent(payload: Uint8Array): TelephoneEvent | null {
  if (payload.byteLength < TELEPHONE_EVENT_BYTES) return null;
  return {
    event: payload[0]!,
    end: (payload[1]! & 0x80) !== 0,
    volume: payload[1]! & 0x3f,
    duration: (payload[2]! << 8) | payload[3]!,
  };
}

export function serializeTelephoneEvent(report: TelephoneEvent): Uint8Array {
  const duration = Math.min(Math.max(0, Math.round(report.duration)), 0xffff);
  return Uint8Array.of(report.event & 0xff, (report.end ? 0x80 : 0) | (report.volume & 0x3f), duration >> 8, duration & 0xff);
}
