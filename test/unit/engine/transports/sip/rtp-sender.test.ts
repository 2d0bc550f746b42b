import { describe, expect, it } from "vitest";
import { RtpSender } from "../../../../../engine/transports/sip/rtp-sender.js";
import { FakeClock } from "../../../../helpers/fake-clock.js";

function sender(clock: FakeClock): RtpSender {
  return new RtpSender({ clock, ssrc: 7, sequence: 65534, timestamp: 0xffffff00 });
}

describe("RtpSender", () => {
  it("numbers a talkspurt: sequence +1 (wrapping), timestamp +160, marker on the first packet only", () => {
    const clock = new FakeClock();
    const rtp = sender(clock);
    const packets = [];
    for (let i = 0; i < 4; i++) {
      packets.push(rtp.audio(160));
      clock.advance(20);
    }
    expect(packets).toEqual([
      { ssrc: 7, sequence: 65534, timestamp: 0xffffff00, marker: true },
      { ssrc: 7, sequence: 65535, timestamp: 0xffffffa0, marker: false },
      { ssrc: 7, sequence: 0, timestamp: 0x40, marker: false },
      { ssrc: 7, sequence: 1, timestamp: 0xe0, marker: false },
    ]);
  });

  it("starts a new talkspurt after a pause (timestamp moved on by the pause) and after endTalkspurt()", () => {
    const clock = new FakeClock();
    const rtp = new RtpSender({ clock, ssrc: 1, sequence: 0, timestamp: 0 });
    rtp.audio(160);
    clock.advance(20);
    rtp.audio(160); // ends at 40 ms
    clock.advance(20 + 500);
    expect(rtp.audio(160)).toEqual({ ssrc: 1, sequence: 2, timestamp: 320 + 25 * 160, marker: true });
    clock.advance(5); // a burst of frames sent at once is still one talkspurt
    expect(rtp.audio(160)).toMatchObject({ timestamp: 320 + 26 * 160, marker: false });
    rtp.endTalkspurt();
    expect(rtp.audio(160)).toMatchObject({ sequence: 4, marker: true });
  });

  it("gives a DTMF event the media timestamp, refuses audio during it and goes on after its tone", () => {
    const clock = new FakeClock();
    const rtp = new RtpSender({ clock, ssrc: 1, sequence: 10, timestamp: 1000 });
    rtp.audio(160);
    clock.advance(20);
    expect(rtp.beginEvent()).toBe(1160);
    expect(rtp.eventPacket(true)).toEqual({ ssrc: 1, sequence: 11, timestamp: 1160, marker: true });
    expect(rtp.audio(160)).toBeNull();
    clock.advance(50);
    expect(rtp.eventPacket(false)).toEqual({ ssrc: 1, sequence: 12, timestamp: 1160, marker: false });
    rtp.endEvent(800);
    clock.advance(50); // the tone (100 ms) ended 0 ms ago
    expect(rtp.audio(160)).toEqual({ ssrc: 1, sequence: 13, timestamp: 1960, marker: true });
  });
});
