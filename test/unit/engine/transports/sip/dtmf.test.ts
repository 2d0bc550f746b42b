import { describe, expect, it } from "vitest";
import { digitToEvent, parseTelephoneEvent, serializeTelephoneEvent, type TelephoneEvent } from "../../../../../engine/transports/sip/dtmf-event.js";
import { DtmfReceiver } from "../../../../../engine/transports/sip/dtmf-receiver.js";
import { planDtmfEvent } from "../../../../../engine/transports/sip/dtmf-sender.js";
import type { RtpPacket } from "../../../../../engine/transports/sip/rtp-packet.js";

function eventPacket(timestamp: number, report: TelephoneEvent, ssrc = 1): RtpPacket {
  return { marker: false, payloadType: 101, sequence: 0, timestamp, ssrc, csrcs: [], payload: serializeTelephoneEvent(report) };
}

describe("telephone-event payload", () => {
  it("round-trips event, end bit, volume and duration", () => {
    const report = { event: 11, end: true, volume: 10, duration: 800 };
    expect(Array.from(serializeTelephoneEvent(report))).toEqual([11, 0x8a, 0x03, 0x20]);
    expect(parseTelephoneEvent(serializeTelephoneEvent(report))).toEqual(report);
    expect(parseTelephoneEvent(Uint8Array.of(1, 2, 3))).toBeNull();
  });

  it("maps digits to event codes and refuses others", () => {
    expect(["0", "9", "*", "#", "A", "d"].map(digitToEvent)).toEqual([0, 9, 10, 11, 12, 15]);
    expect(() => digitToEvent("E")).toThrow(RangeError);
    expect(() => digitToEvent("12")).toThrow(RangeError);
  });
});

describe("DtmfReceiver", () => {
  it("reports each event once: start, update and three end packets give one digit", () => {
    const receiver = new DtmfReceiver();
    const reports = [
      eventPacket(1000, { event: 1, end: false, volume: 10, duration: 400 }),
      eventPacket(1000, { event: 1, end: false, volume: 10, duration: 800 }),
      ...Array.from({ length: 3 }, () => eventPacket(1000, { event: 1, end: true, volume: 10, duration: 800 })),
      eventPacket(3000, { event: 11, end: true, volume: 10, duration: 800 }), // start and updates lost
      eventPacket(3000, { event: 11, end: true, volume: 10, duration: 800 }),
      eventPacket(1000, { event: 1, end: true, volume: 10, duration: 800 }), // a late copy of the first end
      eventPacket(5000, { event: 1, end: false, volume: 10, duration: 400 }), // the same key again
    ];
    expect(reports.map((packet) => receiver.receive(packet))).toEqual(["1", null, null, null, null, "#", null, null, "1"]);
  });

  it("maps events 10-15 to * # A-D, ignores flash and others, and treats a new SSRC as a new stream", () => {
    const receiver = new DtmfReceiver();
    const codes = [10, 11, 12, 13, 14, 15, 16, 70];
    expect(codes.map((event, i) => receiver.receive(eventPacket(100 * (i + 1), { event, end: false, volume: 0, duration: 160 })))).toEqual([
      "*", "#", "A", "B", "C", "D", null, null,
    ]);
    expect(receiver.receive(eventPacket(100, { event: 5, end: false, volume: 0, duration: 160 }, 2))).toBe("5");
  });

  it("handles timestamps that wrap past 2^32", () => {
    const receiver = new DtmfReceiver();
    expect(receiver.receive(eventPacket(0xffffff00, { event: 2, end: true, volume: 0, duration: 800 }))).toBe("2");
    expect(receiver.receive(eventPacket(0x00000100, { event: 3, end: true, volume: 0, duration: 800 }))).toBe("3");
  });
});

describe("planDtmfEvent", () => {
  it("plans a start with the marker, updates every 50 ms and the end three times", () => {
    const plan = planDtmfEvent("#", { durationMs: 120 });
    const rows = plan.map((p) => ({ atMs: p.atMs, marker: p.marker, ...parseTelephoneEvent(p.payload)! }));
    expect(rows).toEqual([
      { atMs: 0, marker: true, event: 11, end: false, volume: 10, duration: 400 },
      { atMs: 50, marker: false, event: 11, end: false, volume: 10, duration: 800 },
      { atMs: 100, marker: false, event: 11, end: false, volume: 10, duration: 960 },
      { atMs: 150, marker: false, event: 11, end: true, volume: 10, duration: 960 },
      { atMs: 200, marker: false, event: 11, end: true, volume: 10, duration: 960 },
      { atMs: 250, marker: false, event: 11, end: true, volume: 10, duration: 960 },
    ]);
  });

  it("refuses bad digits and tone settings", () => {
    expect(() => planDtmfEvent("x")).toThrow(RangeError);
    expect(() => planDtmfEvent("1", { durationMs: 10 })).toThrow(RangeError);
    expect(() => planDtmfEvent("1", { volume: 64 })).toThrow(RangeError);
  });
});
