import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import { deinterleave, parseWav } from "../../../../engine/audio/wav.js";
import { CallRecorder } from "../../../../engine/recording/call-recorder.js";
import { rmsOf } from "../audio/signals.js";

const RATE = 16000;
/** The resampler's filter reach at the recording rate: edges of a tone ring over this many samples. */
const EDGE = 80;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-recording-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Side = "caller" | "agent";

interface Tone {
  side: Side;
  frequency: number;
  sampleRate: number;
  startMs: number;
  durationMs: number;
  amplitude: number;
}

/** A tone cut into 20 ms frames stamped with their call time. */
function toneFrames(tone: Tone): { side: Side; frame: AudioFrame; atMs: number }[] {
  const perFrame = tone.sampleRate / 50;
  const frames = [];
  for (let f = 0; f < tone.durationMs / 20; f++) {
    const samples = new Int16Array(perFrame);
    for (let i = 0; i < perFrame; i++) {
      samples[i] = Math.round(tone.amplitude * Math.sin((2 * Math.PI * tone.frequency * (f * perFrame + i)) / tone.sampleRate));
    }
    frames.push({ side: tone.side, frame: { samples, sampleRate: tone.sampleRate }, atMs: tone.startMs + f * 20 });
  }
  return frames;
}

/**
 * How far `channel` is from the tone placed exactly at its start time, over the tone's
 * steady part, in dB relative to the tone. A placement one sample off scores about -10 dB.
 */
function placementErrorDb(channel: Int16Array, tone: Tone): number {
  const start = (tone.startMs * RATE) / 1000;
  const end = ((tone.startMs + tone.durationMs) * RATE) / 1000;
  let error = 0;
  let energy = 0;
  for (let k = start + EDGE; k < end - EDGE; k++) {
    const expected = tone.amplitude * Math.sin((2 * Math.PI * tone.frequency * (k - start)) / RATE);
    error += (channel[k]! - expected) ** 2;
    energy += expected ** 2;
  }
  return 10 * Math.log10(error / energy);
}

async function record(writes: { side: Side; frame: AudioFrame; atMs: number }[], options: { holdMs?: number } = {}) {
  const file = path.join(dir, "call.wav");
  const recorder = new CallRecorder({ path: file, ...options });
  await recorder.open();
  for (const { side, frame, atMs } of writes) {
    if (side === "caller") recorder.writeCaller(frame, atMs);
    else recorder.writeAgent(frame, atMs);
  }
  const result = await recorder.close();
  const wav = parseWav(readFileSync(file));
  const [left, right] = deinterleave(wav.samples, wav.channels);
  return { result, wav, left: left!, right: right!, file };
}

describe("CallRecorder", () => {
  it("puts caller left and agent right, each at its call time, with silence between", async () => {
    // The caller speaks 0-500 ms (8 kHz telephony); the agent answers 700 ms later (16 kHz TTS).
    const caller: Tone = { side: "caller", frequency: 440, sampleRate: 8000, startMs: 0, durationMs: 500, amplitude: 8000 };
    const agent: Tone = { side: "agent", frequency: 1000, sampleRate: 16000, startMs: 1200, durationMs: 800, amplitude: 6000 };
    const writes = [...toneFrames(caller), ...toneFrames(agent)].sort((a, b) => a.atMs - b.atMs);
    const { result, wav, left, right, file } = await record(writes);

    expect(result).toEqual({ path: file, durationMs: 2000 });
    expect(wav).toMatchObject({ sampleRate: 16000, channels: 2 });
    expect(left.length).toBe(32000);
    expect(placementErrorDb(left, caller)).toBeLessThan(-40);
    expect(placementErrorDb(right, agent)).toBeLessThan(-40);
    // Silence before, between and after, on each side.
    expect(rmsOf(left, 8000 + EDGE, 32000)).toBeLessThan(1);
    expect(rmsOf(right, 0, 19200 - EDGE)).toBeLessThan(1);
    // The agent's tone starts exactly at 1200 ms: nothing before it, full level right after.
    expect(rmsOf(right, 19200 - 40, 19200 - 8)).toBeLessThan(100);
    expect(rmsOf(right, 19200 + 8, 19200 + 40)).toBeGreaterThan(3000);
  });

  it("places a 24 kHz agent and a late-arriving side correctly", async () => {
    const caller: Tone = { side: "caller", frequency: 300, sampleRate: 8000, startMs: 0, durationMs: 2000, amplitude: 5000 };
    const agent: Tone = { side: "agent", frequency: 1500, sampleRate: 24000, startMs: 700, durationMs: 800, amplitude: 7000 };
    const callerFrames = toneFrames(caller);
    const agentFrames = toneFrames(agent);
    // The agent's frames reach the recorder 300 ms after the caller frames of the same time.
    const writes = callerFrames.flatMap((write) => [write, ...agentFrames.filter((a) => a.atMs === write.atMs - 300)]);
    expect(writes.length).toBe(callerFrames.length + agentFrames.length);
    const { result, left, right } = await record(writes);
    expect(result.durationMs).toBe(2000);
    expect(placementErrorDb(left, caller)).toBeLessThan(-40);
    expect(placementErrorDb(right, agent)).toBeLessThan(-40);
    expect(rmsOf(right, 0, 11200 - EDGE)).toBeLessThan(1);
    expect(rmsOf(right, 24000 + EDGE, 32000)).toBeLessThan(1);
  });

  it("restarts a side at the chunk's own time after a gap", async () => {
    const first: Tone = { side: "agent", frequency: 500, sampleRate: 8000, startMs: 100, durationMs: 400, amplitude: 6000 };
    const second: Tone = { side: "agent", frequency: 700, sampleRate: 16000, startMs: 900, durationMs: 300, amplitude: 6000 };
    const third: Tone = { side: "agent", frequency: 900, sampleRate: 16000, startMs: 1230, durationMs: 200, amplitude: 6000 };
    const { result, left, right } = await record([...toneFrames(first), ...toneFrames(second), ...toneFrames(third)]);
    expect(result.durationMs).toBe(1430);
    for (const tone of [first, second, third]) expect(placementErrorDb(right, tone), `${tone.frequency} Hz`).toBeLessThan(-40);
    expect(rmsOf(right, 8000 + EDGE, 14400 - EDGE)).toBeLessThan(1);
    expect(rmsOf(left)).toBe(0);
  });

  it("joins chunks whose timestamps jitter by a few ms into one continuous stream", async () => {
    const tone: Tone = { side: "caller", frequency: 440, sampleRate: 8000, startMs: 0, durationMs: 1000, amplitude: 8000 };
    const jittered = toneFrames(tone).map((write, i) => ({ ...write, atMs: write.atMs + (i % 3) * 3 }));
    const { left } = await record(jittered);
    expect(placementErrorDb(left, tone)).toBeLessThan(-40);
  });

  it("keeps the end of a side that stops sending while the other side goes on", async () => {
    // The caller's transport sends nothing after 500 ms; the agent talks on for seconds.
    const caller: Tone = { side: "caller", frequency: 440, sampleRate: 8000, startMs: 0, durationMs: 500, amplitude: 8000 };
    const agent: Tone = { side: "agent", frequency: 1000, sampleRate: 16000, startMs: 600, durationMs: 3000, amplitude: 6000 };
    const writes = [...toneFrames(caller), ...toneFrames(agent)].sort((a, b) => a.atMs - b.atMs);
    const { left } = await record(writes, { holdMs: 500 });
    // The last 5 ms of the caller's tone come out of the resampler only when its stream ends.
    expect(rmsOf(left, 8000 - EDGE, 8000 - 10)).toBeGreaterThan(3000);
    expect(placementErrorDb(left, caller)).toBeLessThan(-40);
  });

  it("drops audio that arrives later than the hold window, keeping the rest", async () => {
    const caller: Tone = { side: "caller", frequency: 440, sampleRate: 8000, startMs: 0, durationMs: 2000, amplitude: 8000 };
    const lateAgent: Tone = { side: "agent", frequency: 1000, sampleRate: 16000, startMs: 100, durationMs: 100, amplitude: 8000 };
    const { result, left, right } = await record([...toneFrames(caller), ...toneFrames(lateAgent)], { holdMs: 500 });
    expect(result.durationMs).toBe(2000);
    expect(placementErrorDb(left, caller)).toBeLessThan(-40);
    expect(rmsOf(right)).toBe(0);
  });

  it("writes incrementally while the call goes on", async () => {
    const file = path.join(dir, "live.wav");
    const recorder = new CallRecorder({ path: file, holdMs: 200 });
    await recorder.open();
    for (const { frame, atMs } of toneFrames({ side: "caller", frequency: 440, sampleRate: 8000, startMs: 0, durationMs: 3000, amplitude: 8000 })) {
      recorder.writeCaller(frame, atMs);
    }
    await recorder.flush();
    // Everything but the last hold window (200 ms) and one write batch (250 ms) is on file.
    const partial = parseWav(readFileSync(file));
    expect(partial.samples.length / 2).toBeGreaterThanOrEqual(RATE * 2.55);
    expect(partial.samples.length / 2).toBeLessThanOrEqual(RATE * 2.8);
    await recorder.close();
  });

  it("refuses writes before open and after close", async () => {
    const recorder = new CallRecorder({ path: path.join(dir, "x.wav") });
    const frame = { samples: new Int16Array(160), sampleRate: 8000 };
    expect(() => recorder.writeCaller(frame, 0)).toThrow(/not open/);
    await recorder.open();
    await recorder.close();
    expect(() => recorder.writeAgent(frame, 0)).toThrow(/not open/);
  });
});
