import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import { FrameClock } from "../../../../engine/audio/frame-clock.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

function frame(tag: number, ms = 20): AudioFrame {
  const samples = new Int16Array((8000 * ms) / 1000);
  samples[0] = tag;
  return { samples, sampleRate: 8000 };
}

function setup() {
  const clock = new FakeClock();
  const frameClock = new FrameClock({ clock });
  const sent: { tag: number; atMs: number; sentAt: number }[] = [];
  let idles = 0;
  frameClock.on("frame", (f, atMs) => sent.push({ tag: f.samples[0]!, atMs, sentAt: clock.now() }));
  frameClock.on("idle", () => idles++);
  return { clock, frameClock, sent, idles: () => idles };
}

describe("FrameClock", () => {
  it("sends the first frame at once and the rest every 20 ms", () => {
    const { clock, frameClock, sent } = setup();
    clock.advance(1000);
    for (let i = 1; i <= 5; i++) frameClock.enqueue(frame(i));
    expect(sent).toEqual([{ tag: 1, atMs: 1000, sentAt: 1000 }]);
    expect(frameClock.queuedMs).toBe(80);
    clock.advance(19);
    expect(sent.length).toBe(1);
    clock.advance(1);
    expect(sent.map((s) => s.tag)).toEqual([1, 2]);
    clock.advance(60);
    expect(sent.map((s) => [s.tag, s.atMs, s.sentAt])).toEqual([
      [1, 1000, 1000],
      [2, 1020, 1020],
      [3, 1040, 1040],
      [4, 1060, 1060],
      [5, 1080, 1080],
    ]);
  });

  it("keeps an absolute schedule: a late timer catches up instead of drifting", () => {
    const { clock, frameClock, sent } = setup();
    for (let i = 1; i <= 6; i++) frameClock.enqueue(frame(i));
    clock.stall(47); // the event loop was busy: slots 20 and 40 passed
    clock.advance(0); // the timer for slot 20 fires late, at 47
    expect(sent.map((s) => [s.tag, s.atMs, s.sentAt])).toEqual([
      [1, 0, 0],
      [2, 20, 47],
      [3, 40, 47],
    ]);
    clock.advance(13);
    expect(sent.at(-1)).toEqual({ tag: 4, atMs: 60, sentAt: 60 });
    clock.advance(40);
    expect(sent.map((s) => s.atMs)).toEqual([0, 20, 40, 60, 80, 100]);
  });

  it("emits idle when the last frame has finished playing, and restarts on the next frame", () => {
    const { clock, frameClock, sent, idles } = setup();
    frameClock.enqueue(frame(1));
    frameClock.enqueue(frame(2));
    clock.advance(39);
    expect(idles()).toBe(0);
    expect(frameClock.playing).toBe(true);
    clock.advance(1);
    expect(idles()).toBe(1);
    expect(frameClock.playing).toBe(false);
    expect(frameClock.playedMs).toBe(40);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(500);
    frameClock.enqueue(frame(3));
    expect(sent.at(-1)).toEqual({ tag: 3, atMs: 540, sentAt: 540 });
  });

  it("continues the schedule seamlessly when frames arrive just in time", () => {
    const { clock, frameClock, sent, idles } = setup();
    frameClock.enqueue(frame(1));
    clock.advance(10);
    frameClock.enqueue(frame(2));
    clock.advance(10);
    clock.advance(10);
    frameClock.enqueue(frame(3));
    clock.advance(30);
    expect(sent.map((s) => s.atMs)).toEqual([0, 20, 40]);
    expect(idles()).toBe(1);
  });

  it("treats a frame queued after the queue ran dry as a new run even if the timer is late", () => {
    const { clock, frameClock, sent, idles } = setup();
    frameClock.enqueue(frame(1));
    clock.stall(100); // the idle timer (due at 20) has not fired yet
    frameClock.enqueue(frame(2));
    expect(idles()).toBe(1);
    expect(sent.at(-1)).toEqual({ tag: 2, atMs: 100, sentAt: 100 });
    expect(frameClock.playedMs).toBe(20);
  });

  it("clears at once on barge-in, reporting what played and what was dropped", () => {
    const { clock, frameClock, sent, idles } = setup();
    for (let i = 1; i <= 10; i++) frameClock.enqueue(frame(i));
    clock.advance(50); // frames 1-3 sent; 50 ms of audio heard (frame 3 half way)
    expect(frameClock.playedMs).toBe(50);
    const result = frameClock.clear();
    expect(result.playedMs).toBe(50);
    expect(result.dropped.map((f) => f.samples[0])).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(result.droppedMs).toBe(140);
    expect(frameClock.queuedMs).toBe(0);
    expect(frameClock.playing).toBe(false);
    clock.advance(1000);
    expect(sent.length).toBe(3);
    expect(idles()).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(frameClock.playedMs).toBe(50);
  });

  it("pauses at once keeping the queue, and resumes with the next frame where it stopped", () => {
    const { clock, frameClock, sent, idles } = setup();
    for (let i = 1; i <= 5; i++) frameClock.enqueue(frame(i));
    clock.advance(30);
    frameClock.pause();
    expect(frameClock.paused).toBe(true);
    expect(frameClock.playing).toBe(false);
    frameClock.enqueue(frame(6));
    clock.advance(500);
    // Frames 1 and 2 went out before the pause; nothing while paused, and no idle.
    expect(sent.map((s) => s.tag)).toEqual([1, 2]);
    expect(frameClock.queuedMs).toBe(80);
    expect(idles()).toBe(0);
    frameClock.resume();
    expect(sent.at(-1)).toEqual({ tag: 3, atMs: 530, sentAt: 530 });
    clock.advance(100);
    expect(sent.map((s) => s.tag)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(idles()).toBe(1);
    // 10 ms of frame 2 had played when the pause came, then frames 3 to 6.
    expect(frameClock.playedMs).toBe(110);
  });

  it("ends a pause on clear: what was queued is dropped and new frames play at once", () => {
    const { clock, frameClock, sent } = setup();
    for (let i = 1; i <= 3; i++) frameClock.enqueue(frame(i));
    frameClock.pause();
    expect(frameClock.clear().droppedMs).toBe(40);
    expect(frameClock.paused).toBe(false);
    clock.advance(100);
    frameClock.enqueue(frame(9));
    expect(sent.map((s) => s.tag)).toEqual([1, 9]);
  });

  it("counts played audio across runs, so a turn can take differences", () => {
    const { clock, frameClock } = setup();
    frameClock.enqueue(frame(1));
    frameClock.enqueue(frame(2));
    clock.advance(100);
    const turnStart = frameClock.playedMs;
    expect(turnStart).toBe(40);
    for (let i = 0; i < 5; i++) frameClock.enqueue(frame(i));
    clock.advance(30);
    expect(frameClock.clear().playedMs - turnStart).toBe(30);
  });

  it("lets a frame listener clear the queue", () => {
    const { clock, frameClock, sent } = setup();
    frameClock.on("frame", (f) => {
      if (f.samples[0] === 2) frameClock.clear();
    });
    for (let i = 1; i <= 4; i++) frameClock.enqueue(frame(i));
    clock.advance(200);
    expect(sent.map((s) => s.tag)).toEqual([1, 2]);
  });

  it("schedules by frame duration, not frame count", () => {
    const { clock, frameClock, sent } = setup();
    frameClock.enqueue(frame(1, 10));
    frameClock.enqueue(frame(2, 20));
    frameClock.enqueue(frame(3, 20));
    clock.advance(100);
    expect(sent.map((s) => s.atMs)).toEqual([0, 10, 30]);
  });
});
