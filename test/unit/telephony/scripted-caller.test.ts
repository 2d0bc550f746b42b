import { describe, expect, it } from "vitest";
import { ScriptedCaller, type CallerTurn, type ScriptedCallerOptions } from "../../../src/telephony/simulator/scripted-caller.js";
import { FakeClock } from "../../helpers/fake-clock.js";

// The scripted caller driven directly on a fake clock: an agent that the test scripts sends it
// a 20 ms frame every 20 ms (loud or silent), and the test reads what the caller sent back.

const FRAME = 160;
const LOUD = new Int16Array(FRAME).fill(3000);
const QUIET = new Int16Array(FRAME);

/** A tone of `ms` at `amplitude`, with silence before and after it. */
function line(ms: number, hz: number, amplitude = 4000, silenceMs = 0): Int16Array {
  const pad = silenceMs * 8;
  const samples = new Int16Array(pad + ms * 8 + pad);
  for (let i = 0; i < ms * 8; i++) samples[pad + i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / 8000));
  return samples;
}

/** Whether the agent speaks at time `t`, given the caller's turns so far. */
type Agent = (t: number, turns: CallerTurn[]) => boolean;

/** Greets for `greetingMs`, then answers each line `delayMs` after it ends, for `replyMs`; silent while the caller talks. */
function politeAgent({ greetingMs = 1000, delayMs = 400, replyMs = 1000 } = {}): Agent {
  return (t, turns) => {
    const last = turns.at(-1);
    if (!last) return t < greetingMs;
    return last.endedAt !== null && t >= last.endedAt + delayMs && t < last.endedAt + delayMs + replyMs;
  };
}

function play(options: Omit<ScriptedCallerOptions, "clock">, agent: Agent, forMs = 20_000) {
  const clock = new FakeClock();
  const caller = new ScriptedCaller({ ...options, clock });
  /** What the caller sent, frame k in slot k * 20 ms. */
  const frames: Int16Array[] = [];
  const agentLoudAt: number[] = [];
  const hangups: Array<{ at: number; reason: string }> = [];
  caller.on("audio", (frame) => frames.push(frame.samples));
  caller.on("hangup", (reason) => hangups.push({ at: clock.now(), reason }));
  const agentTick = (): void => {
    if (caller.closed) return;
    const loud = agent(clock.now(), caller.turns());
    if (loud) agentLoudAt.push(clock.now());
    caller.sendAudio({ samples: loud ? LOUD : QUIET, sampleRate: 8000 });
    clock.setTimeout(agentTick, 20);
  };
  caller.start();
  agentTick();
  clock.advance(forMs);
  return { caller, frames, agentLoudAt, hangups };
}

/** The samples the caller sent from `fromMs` for `length` samples. */
function sent(frames: Int16Array[], fromMs: number, length: number): Int16Array {
  const all = new Int16Array(frames.length * FRAME);
  frames.forEach((frame, k) => all.set(frame, k * FRAME));
  return all.subarray(fromMs * 8, fromMs * 8 + length);
}

function rmsOf(samples: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / samples.length);
}

describe("ScriptedCaller", () => {
  it("says its lines in order, each once the agent has been quiet 800 ms after its turn, and records the latencies", () => {
    const lines = [line(1000, 440), line(600, 660)];
    const { caller, frames } = play({ lines }, politeAgent());
    // The greeting plays 0-1000 ms: line 0 at 1800; the reply 400 ms after each line, 1000 ms long.
    expect(caller.turns()).toEqual([
      { index: 0, startedAt: 1800, endedAt: 2800, agentReplyAt: 3200 },
      { index: 1, startedAt: 5000, endedAt: 5600, agentReplyAt: 6000 },
    ]);
    expect(caller.agentFirstAudioAt).toBe(0);
    expect(sent(frames, 1800, lines[0]!.length)).toEqual(lines[0]);
    expect(sent(frames, 5000, lines[1]!.length)).toEqual(lines[1]);
    // Silence everywhere else: before line 0, between the lines.
    expect(sent(frames, 0, 1800 * 8).every((s) => s === 0)).toBe(true);
    expect(sent(frames, 2800, (5000 - 2800) * 8).every((s) => s === 0)).toBe(true);
    const latencies = caller.turns().map((turn) => turn.agentReplyAt! - turn.endedAt!);
    expect(latencies).toEqual([400, 400]);
  });

  it("waits pauseMs after the agent's turn", () => {
    const { caller } = play({ lines: [line(1000, 440)], pauseMs: 1500 }, politeAgent());
    expect(caller.turns()[0]!.startedAt).toBe(2500);
  });

  it("does not take agent audio during its line as the answer", () => {
    const polite = politeAgent();
    // A blip 200-300 ms into each line (an agent that talks over the caller briefly).
    const agent: Agent = (t, turns) => {
      const last = turns.at(-1);
      if (last && last.endedAt === null) return t >= last.startedAt + 200 && t < last.startedAt + 300;
      return polite(t, turns);
    };
    const { caller } = play({ lines: [line(1000, 440), line(600, 660)] }, agent);
    expect(caller.turns().map((turn) => [turn.startedAt, turn.agentReplyAt])).toEqual([
      [1800, 3200],
      [5000, 6000],
    ]);
  });

  it("says a barge-in line bargeInAfterMs after the agent starts its turn, while the agent is still speaking", () => {
    const lines = [line(1000, 440), line(600, 660)];
    const { caller, agentLoudAt, frames } = play({ lines, bargeIn: [false, true] }, politeAgent({ replyMs: 3000 }));
    const [first, second] = caller.turns();
    expect(first).toEqual({ index: 0, startedAt: 1800, endedAt: 2800, agentReplyAt: 3200 });
    expect(second!.startedAt).toBe(3200 + 600);
    // The agent's reply was meant to run to 6200: it was speaking the frame before the line started.
    expect(agentLoudAt).toContain(second!.startedAt - 20);
    expect(sent(frames, 3800, lines[1]!.length)).toEqual(lines[1]);
  });

  it("barges in on the greeting with a set of line indexes and a custom delay", () => {
    const { caller } = play({ lines: [line(500, 440)], bargeIn: new Set([0]), bargeInAfterMs: 300 }, politeAgent({ greetingMs: 3000 }));
    expect(caller.turns()[0]!.startedAt).toBe(300);
    expect(caller.turns()[0]!.agentReplyAt).toBe(1200);
  });

  it("sends seeded white noise at the requested SNR under its lines and the silence between them", () => {
    const lines = [line(1000, 440, 4000, 200), line(800, 660, 4000, 200)];
    const snrDb = 20;
    const { caller, frames } = play({ lines, noiseDb: snrDb, noiseSeed: 7 }, politeAgent());
    const [first, second] = caller.turns();
    const gaps = [
      sent(frames, 0, first!.startedAt * 8),
      sent(frames, first!.endedAt!, (second!.startedAt - first!.endedAt!) * 8),
    ];
    for (const gap of gaps) {
      expect(gap.length).toBeGreaterThan(0);
      for (let k = 0; k < gap.length; k += FRAME) expect(gap.subarray(k, k + FRAME).some((s) => s !== 0)).toBe(true);
    }
    // The speech level is the tones' (the lines' non-silent part); the noise level is read from the gaps.
    const speech = rmsOf(Array.from(lines[0]!.subarray(1600, 1600 + 8000)).concat(Array.from(lines[1]!.subarray(1600, 1600 + 6400))));
    const noise = rmsOf(Array.from(gaps[0]!).concat(Array.from(gaps[1]!)));
    expect(Math.abs(20 * Math.log10(speech / noise) - snrDb)).toBeLessThan(1);
    // The lines carry the noise too, and it is the same noise for the same seed, other noise for another.
    const said = sent(frames, first!.startedAt, lines[0]!.length);
    expect(said).not.toEqual(lines[0]);
    const underLine = rmsOf(Array.from(said, (s, i) => s - lines[0]![i]!));
    expect(Math.abs(20 * Math.log10(underLine / noise))).toBeLessThan(1);
    expect(play({ lines, noiseDb: snrDb, noiseSeed: 7 }, politeAgent()).frames).toEqual(frames);
    expect(play({ lines, noiseDb: snrDb, noiseSeed: 8 }, politeAgent()).frames).not.toEqual(frames);
  });

  it("clips speech plus noise to int16 instead of wrapping", () => {
    const loud = new Int16Array(400 * 8).fill(32000);
    const { caller, frames } = play({ lines: [loud], noiseDb: 0 }, politeAgent());
    const said = sent(frames, caller.turns()[0]!.startedAt, loud.length);
    // Half the noise pushes past full scale: those samples sit at 32767 (wrapped, they would be negative).
    expect(said.filter((s) => s === 32767).length / said.length).toBeGreaterThan(0.3);
    // Clipped, the line keeps most of its (positive) level; wrapped, half of it would turn negative.
    expect(said.reduce((sum, s) => sum + s, 0) / said.length).toBeGreaterThan(10_000);
  });

  it("hangs up once the agent has answered its last line and been quiet pauseMs", () => {
    const { caller, frames, hangups } = play({ lines: [line(1000, 440), line(600, 660)] }, politeAgent());
    // The last reply plays 6000-7000 ms.
    expect(hangups).toEqual([{ at: 7800, reason: "callee_hangup" }]);
    expect(caller.closed).toBe(true);
    expect(frames.length).toBe(7800 / 20);
  });

  it("hangs up at maxCallMs when its last line is never answered", () => {
    const agent: Agent = (t, turns) => turns.length === 0 && t < 1000;
    const { caller, hangups, frames } = play({ lines: [line(1000, 440)], maxCallMs: 5000 }, agent);
    expect(hangups).toEqual([{ at: 5000, reason: "callee_hangup" }]);
    expect(frames.length).toBe(5000 / 20);
    expect(caller.turns()).toEqual([{ index: 0, startedAt: 1800, endedAt: 2800, agentReplyAt: null }]);
  });

  it("never speaks before the agent has, and hangs up at once with maxCallMs 0", () => {
    const silent = play({ lines: [line(1000, 440)], maxCallMs: 3000 }, () => false);
    expect(silent.caller.turns()).toEqual([]);
    expect(silent.caller.agentFirstAudioAt).toBeNull();
    expect(silent.hangups).toEqual([{ at: 3000, reason: "callee_hangup" }]);
    const atOnce = play({ lines: [], maxCallMs: 0 }, () => false);
    expect(atOnce.hangups).toEqual([{ at: 0, reason: "callee_hangup" }]);
    expect(atOnce.caller.closed).toBe(true);
  });

  it("stops sending when the call closes it, without a hang-up of its own", () => {
    const clock = new FakeClock();
    const caller = new ScriptedCaller({ lines: [line(1000, 440)], clock });
    let frames = 0;
    const hangups: string[] = [];
    caller.on("audio", () => frames++);
    caller.on("hangup", (reason) => hangups.push(reason));
    caller.start();
    clock.advance(1000);
    caller.close();
    const before = frames;
    clock.advance(5000);
    expect(before).toBe(51);
    expect(frames).toBe(before);
    expect(hangups).toEqual([]);
    expect(caller.closed).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });
});
