import { EventEmitter } from "eventemitter3";
import { describe, expect, it } from "vitest";
import type { AudioFrame, CallEvent, MediaTransport, TransportEvents } from "../../../engine/index.js";
import { SupervisedLine, type LineListener } from "../../../src/telephony/supervised-line.js";
import { FakeClock } from "../../helpers/fake-clock.js";

// Live supervision's media side: listeners hear both sides of a call on a 20 ms clock, and a
// supervisor can take the line over from the agent. Everything runs on a fake clock.

/** A line that notes what it is sent. */
class FakeLine extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "sip";
  readonly sent: AudioFrame[] = [];
  readonly marks: string[] = [];
  readonly events: CallEvent[] = [];
  readonly dtmf: string[] = [];
  clears = 0;
  closedWith: string | null = null;
  constructor(
    readonly inputSampleRate = 8000,
    readonly outputSampleRate = 8000,
  ) {
    super();
  }
  get closed(): boolean {
    return this.closedWith !== null;
  }
  sendAudio(frame: AudioFrame): void {
    this.sent.push(frame);
  }
  clearAudio(): void {
    this.clears++;
  }
  sendMark(name: string): void {
    this.marks.push(name);
  }
  async sendDtmf(digits: string): Promise<void> {
    this.dtmf.push(digits);
  }
  sendEvent(event: CallEvent): void {
    this.events.push(event);
  }
  close(reason: string): void {
    this.closedWith ??= reason;
  }
}

/** 20 ms of one constant level. */
const frame = (level: number, sampleRate = 8000): AudioFrame => ({ samples: new Int16Array((sampleRate * 20) / 1000).fill(level), sampleRate });
const pcm16k = (level: number, ms: number) => new Int16Array(16 * ms).fill(level);

/** A listener that keeps what it hears. */
function recorder(stereo: boolean): LineListener & { frames: Int16Array[]; ended: number } {
  const frames: Int16Array[] = [];
  const listener = { stereo, frames, ended: 0, onAudio: (pcm: Int16Array) => void frames.push(pcm), onEnd: () => void listener.ended++ };
  return listener;
}

const left = (stereo: Int16Array) => stereo.filter((_, i) => i % 2 === 0);
const right = (stereo: Int16Array) => stereo.filter((_, i) => i % 2 === 1);
const constant = (samples: Int16Array) => (samples.every((s) => s === samples[0]) ? samples[0] : "varies");

function setup(inputRate = 8000, outputRate = 8000) {
  const clock = new FakeClock();
  const line = new FakeLine(inputRate, outputRate);
  const supervised = new SupervisedLine(line, { clock });
  /** `count` steps of 20 ms: the caller's frame arrives, the agent sends one (when given), the clock moves. */
  const talk = (count: number, caller: number | null, agent: number | null, each?: () => void) => {
    for (let i = 0; i < count; i++) {
      if (caller !== null) line.emit("audio", frame(caller, inputRate));
      if (agent !== null) supervised.sendAudio(frame(agent, outputRate));
      each?.();
      clock.advance(20);
    }
  };
  return { clock, line, supervised, talk };
}

describe("SupervisedLine: pass-through", () => {
  it("passes the line's events to the session and the session's audio, marks, events and keys to the line", async () => {
    const { line, supervised } = setup(8000, 16000);
    expect([supervised.protocol, supervised.inputSampleRate, supervised.outputSampleRate, supervised.closed]).toEqual(["sip", 8000, 16000, false]);
    const seen: unknown[] = [];
    supervised.on("audio", (f) => seen.push(f)).on("dtmf", (d) => seen.push(`dtmf ${d}`)).on("mark", (m) => seen.push(`mark ${m}`)).on("hangup", (r) => seen.push(`hangup ${r}`));
    const caller = frame(5);
    line.emit("audio", caller);
    line.emit("dtmf", "7");
    line.emit("mark", "turn-1");
    const agent = frame(9, 16000);
    supervised.sendAudio(agent);
    supervised.clearAudio();
    supervised.sendMark("turn-2");
    supervised.sendEvent({ type: "state", state: "speaking" });
    await supervised.sendDtmf!("12#");
    line.emit("hangup", "bye");
    expect(seen).toEqual([caller, "dtmf 7", "mark turn-1", "hangup bye"]);
    expect(line.sent).toEqual([agent]);
    expect([line.clears, line.marks, line.events, line.dtmf]).toEqual([1, ["turn-2"], [{ type: "state", state: "speaking" }], ["12#"]]);
    supervised.close("ended");
    expect(line.closedWith).toBe("ended");
    expect(supervised.closed).toBe(true);
  });
});

describe("SupervisedLine: listening", () => {
  it("a mono listener hears caller and agent summed, 20 ms at 16 kHz on each tick", () => {
    const { supervised, talk } = setup();
    const mono = recorder(false);
    supervised.listen(mono);
    talk(12, 1000, 2000);
    expect(mono.frames).toHaveLength(12);
    expect(mono.frames.every((f) => f.length === 320)).toBe(true);
    // Once the 8 -> 16 kHz resamplers have settled, every sample is the sum.
    expect(mono.frames.slice(-6).map(constant)).toEqual(Array(6).fill(3000));
  });

  it("gives each listener a frame of its own", () => {
    const { supervised, talk } = setup();
    supervised.listen({ stereo: false, onAudio: (pcm) => void pcm.fill(0) });
    const mono = recorder(false);
    supervised.listen(mono);
    talk(12, 1000, 2000);
    expect(mono.frames.slice(-6).map(constant)).toEqual(Array(6).fill(3000));
  });

  it("clips the sum to int16", () => {
    const { supervised, talk } = setup();
    const mono = recorder(false);
    supervised.listen(mono);
    talk(10, 30000, 30000);
    expect(mono.frames.slice(-4).map(constant)).toEqual(Array(4).fill(32767));
    talk(10, -30000, -30000);
    expect(mono.frames.slice(-4).map(constant)).toEqual(Array(4).fill(-32768));
  });

  it("a stereo listener hears the caller left and the agent right, alongside a mono listener", () => {
    const { supervised, talk } = setup();
    const stereo = recorder(true);
    const mono = recorder(false);
    supervised.listen(stereo);
    supervised.listen(mono);
    talk(12, 1000, 2000);
    expect(stereo.frames.every((f) => f.length === 640)).toBe(true);
    expect(stereo.frames.slice(-6).map((f) => [constant(left(f)), constant(right(f))])).toEqual(Array(6).fill([1000, 2000]));
    expect(mono.frames.slice(-6).map(constant)).toEqual(Array(6).fill(3000));
  });

  it("resamples other rates too (caller at 16 kHz as is, agent from 48 kHz)", () => {
    const { supervised, talk } = setup(16000, 48000);
    const stereo = recorder(true);
    supervised.listen(stereo);
    talk(12, -1200, 700);
    expect(stereo.frames.slice(-6).map((f) => [constant(left(f)), constant(right(f))])).toEqual(Array(6).fill([-1200, 700]));
  });

  it("a side that sends nothing is silence", () => {
    const { supervised, talk } = setup();
    const stereo = recorder(true);
    const mono = recorder(false);
    supervised.listen(stereo);
    supervised.listen(mono);
    talk(3, null, null);
    expect([...stereo.frames, ...mono.frames].every((f) => f.every((s) => s === 0))).toBe(true);
    talk(10, 1500, null);
    expect(stereo.frames.slice(-5).map((f) => [constant(left(f)), constant(right(f))])).toEqual(Array(5).fill([1500, 0]));
    expect(mono.frames.slice(-5).map(constant)).toEqual(Array(5).fill(1500));
  });

  it("keeps at most 200 ms of each side: a burst loses its oldest audio", () => {
    const { line, clock, supervised } = setup(16000, 16000);
    const stereo = recorder(true);
    supervised.listen(stereo);
    // One second of each side at once, each 20 ms frame its own level.
    for (let level = 1; level <= 50; level++) {
      line.emit("audio", frame(level, 16000));
      supervised.sendAudio(frame(-level, 16000));
    }
    clock.advance(15 * 20);
    // Only the newest 10 frames were kept; then each side has nothing.
    expect(stereo.frames.map((f) => constant(left(f)))).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 0, 0, 0, 0, 0]);
    expect(stereo.frames.map((f) => constant(right(f)))).toEqual([-41, -42, -43, -44, -45, -46, -47, -48, -49, -50, 0, 0, 0, 0, 0]);
  });

  it("runs no timer and keeps no audio while nobody listens; unsubscribing stops frames and the timer", () => {
    const { clock, supervised, talk } = setup(16000, 16000);
    talk(5, 800, 900);
    expect(clock.pendingTimers).toBe(0);
    const first = recorder(true);
    const second = recorder(false);
    const unsubscribeFirst = supervised.listen(first);
    const unsubscribeSecond = supervised.listen(second);
    expect(clock.pendingTimers).toBe(1);
    expect(supervised.listenerTotal).toBe(2);
    clock.advance(20);
    // What was said before anyone listened is not heard.
    expect(first.frames.map((f) => constant(f))).toEqual([0]);
    talk(3, 800, 900);
    unsubscribeFirst();
    talk(3, 800, 900);
    expect(first.frames).toHaveLength(4);
    expect(second.frames).toHaveLength(7);
    expect(clock.pendingTimers).toBe(1);
    unsubscribeSecond();
    unsubscribeSecond();
    expect(clock.pendingTimers).toBe(0);
    talk(3, 800, 900);
    expect(second.frames).toHaveLength(7);
    expect([first.ended, second.ended]).toEqual([0, 0]);
  });

  it("after a stalled event loop, catches up at most 200 ms of frames at once", () => {
    const { clock, supervised } = setup();
    const mono = recorder(false);
    supervised.listen(mono);
    clock.stall(1000);
    clock.advance(0);
    expect(mono.frames).toHaveLength(10);
    clock.advance(20);
    expect(mono.frames).toHaveLength(11);
  });

  it("drops a listener that throws, without breaking the call or the other listeners", () => {
    const { clock, line, supervised, talk } = setup();
    let thrown = 0;
    let ended = 0;
    supervised.listen({
      stereo: false,
      onAudio: () => {
        thrown++;
        throw new Error("socket gone");
      },
      onEnd: () => {
        ended++;
        throw new Error("and again");
      },
    });
    const steady = recorder(false);
    supervised.listen(steady);
    const audio: AudioFrame[] = [];
    supervised.on("audio", (f) => audio.push(f));
    talk(5, 100, 200);
    expect([thrown, ended]).toEqual([1, 1]);
    expect(steady.frames).toHaveLength(5);
    expect(audio).toHaveLength(5);
    expect(line.sent).toHaveLength(5);
    expect(supervised.listenerTotal).toBe(1);

    // The only listener throwing leaves no timer behind.
    const lone = setup();
    lone.supervised.listen({
      stereo: true,
      onAudio: () => {
        throw new Error("boom");
      },
    });
    lone.talk(3, 100, 200);
    expect(lone.clock.pendingTimers).toBe(0);
    expect(clock.pendingTimers).toBe(1);
  });
});

describe("SupervisedLine: taking over", () => {
  it("drops the agent's audio, clears the caller's queue once and paces the supervisor's audio in 20 ms frames", () => {
    const { clock, line, supervised, talk } = setup();
    talk(2, 0, 2000);
    expect(line.sent).toHaveLength(2);
    const takeOver = supervised.takeOver();
    expect(supervised.takenOver).toBe(true);
    expect(line.clears).toBe(1);
    supervised.sendAudio(frame(2000));
    supervised.clearAudio(); // the agent's barge-in does not cut the supervisor short
    expect(line.sent).toHaveLength(2);
    expect(line.clears).toBe(1);

    // 200 ms in one burst: the first frame at once, then one frame every 20 ms.
    takeOver.send(pcm16k(1000, 200));
    const supervisor = () => line.sent.slice(2);
    expect(supervisor()).toHaveLength(1);
    clock.advance(60);
    expect(supervisor()).toHaveLength(4);
    clock.advance(20);
    expect(supervisor()).toHaveLength(5);
    clock.advance(1000);
    // 200 ms of audio (the resampler holds back 5 ms of it, the last frame is padded).
    expect(supervisor()).toHaveLength(10);
    expect(supervisor().every((f) => f.sampleRate === 8000 && f.samples.length === 160)).toBe(true);
    expect(supervisor().slice(2, 8).map((f) => constant(f.samples))).toEqual(Array(6).fill(1000));
    // Nothing left to play, nobody listening: no timer.
    expect(clock.pendingTimers).toBe(0);
    expect(line.clears).toBe(1);
  });

  it("resamples the supervisor's 16 kHz audio to the line's rate (48 kHz)", () => {
    const { clock, line, supervised } = setup(16000, 48000);
    supervised.takeOver().send(pcm16k(-500, 100));
    clock.advance(200);
    expect(line.sent.every((f) => f.sampleRate === 48000 && f.samples.length === 960)).toBe(true);
    expect(line.sent).toHaveLength(5);
    expect(line.sent.slice(1, 4).map((f) => constant(f.samples))).toEqual(Array(3).fill(-500));
  });

  it("queues at most 2 s of the supervisor's audio: what does not fit is dropped", () => {
    const { clock, line, supervised } = setup();
    const takeOver = supervised.takeOver();
    takeOver.send(pcm16k(1000, 1000));
    takeOver.send(pcm16k(2000, 5000));
    clock.advance(6000);
    // The first frame went out at once; 2 s more were queued.
    expect(line.sent).toHaveLength(101);
    // What was queued first plays whole; the newest audio beyond 2 s is what was lost.
    expect(line.sent.slice(1, 48).map((f) => constant(f.samples))).toEqual(Array(47).fill(1000));
    expect(line.sent.slice(52).map((f) => constant(f.samples))).toEqual(Array(49).fill(2000));
  });

  it("listeners hear the supervisor on the agent's side, not the agent", () => {
    const { line, supervised, talk } = setup();
    const stereo = recorder(true);
    supervised.listen(stereo);
    talk(10, 500, 2000);
    const takeOver = supervised.takeOver();
    const before = line.sent.length;
    talk(14, 500, 2000, () => takeOver.send(pcm16k(1000, 20)));
    expect(stereo.frames.slice(-6).map((f) => [constant(left(f)), constant(right(f))])).toEqual(Array(6).fill([500, 1000]));
    // Everything the caller got after the take-over is the supervisor's.
    expect(line.sent.length - before).toBeGreaterThanOrEqual(13);
    expect(line.sent.slice(before).every((f) => f.samples.every((s) => s <= 1100))).toBe(true);
  });

  it("end() gives the line back to the agent; only one take-over at a time", () => {
    const { clock, line, supervised, talk } = setup();
    const takeOver = supervised.takeOver();
    expect(() => supervised.takeOver()).toThrow(/already taken over/);
    takeOver.send(pcm16k(1000, 400));
    clock.advance(40);
    const played = line.sent.length;
    takeOver.end();
    takeOver.end();
    expect(supervised.takenOver).toBe(false);
    // What the supervisor had queued is dropped, and no timer is left.
    expect(clock.pendingTimers).toBe(0);
    takeOver.send(pcm16k(1000, 400));
    clock.advance(400);
    expect(line.sent).toHaveLength(played);
    talk(3, 0, 2000);
    expect(line.sent.slice(played).map((f) => constant(f.samples))).toEqual([2000, 2000, 2000]);
    // The agent's barge-in clears the caller's queue again.
    supervised.clearAudio();
    expect(line.clears).toBe(2);
    const again = supervised.takeOver();
    expect(supervised.takenOver).toBe(true);
    expect(line.clears).toBe(3);
    again.end();
  });
});

describe("SupervisedLine: closing", () => {
  it("close() closes the line, ends the take-over and the listeners and stops every timer", () => {
    const { clock, line, supervised, talk } = setup();
    const stereo = recorder(true);
    supervised.listen(stereo);
    const takeOver = supervised.takeOver();
    takeOver.send(pcm16k(1000, 1000));
    talk(3, 500, 2000);
    expect(clock.pendingTimers).toBe(2);
    const heard = stereo.frames.length;
    const sent = line.sent.length;
    supervised.close("hung up by the agent");
    expect(line.closedWith).toBe("hung up by the agent");
    expect(supervised.closed).toBe(true);
    expect(supervised.takenOver).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    expect(stereo.ended).toBe(1);
    takeOver.send(pcm16k(1000, 100));
    line.emit("audio", frame(500));
    clock.advance(1000);
    expect(stereo.frames).toHaveLength(heard);
    expect(line.sent).toHaveLength(sent);
    expect(clock.pendingTimers).toBe(0);
    // A closed line has nothing to listen to and cannot be taken over.
    const late = recorder(false);
    supervised.listen(late)();
    expect([late.ended, late.frames.length, clock.pendingTimers]).toEqual([1, 0, 0]);
    expect(() => supervised.takeOver()).toThrow(/closed/);
  });

  it("the caller hanging up ends the take-over and the listeners too", () => {
    const { clock, line, supervised } = setup();
    const mono = recorder(false);
    supervised.listen(mono);
    supervised.takeOver().send(pcm16k(1000, 500));
    const hangups: string[] = [];
    supervised.on("hangup", (reason) => hangups.push(reason));
    line.emit("hangup", "BYE");
    expect(hangups).toEqual(["BYE"]);
    expect([supervised.closed, supervised.takenOver, mono.ended, clock.pendingTimers]).toEqual([true, false, 1, 0]);
    supervised.close("hangup");
    expect(line.closedWith).toBe("hangup");
  });
});
