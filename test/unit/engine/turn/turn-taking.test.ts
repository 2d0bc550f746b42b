import { describe, expect, it } from "vitest";
import { isBackchannel, isInterruptRequest } from "../../../../engine/turn/backchannel.js";
import { BargeInPolicy, bargeInDelayMs } from "../../../../engine/turn/barge-in-policy.js";
import { SpeechDetector, type SpeechTransition } from "../../../../engine/turn/speech-detector.js";

/** Feeds 20 ms frames with the given probabilities; returns the transitions. */
function run(detector: SpeechDetector, probabilities: number[]): SpeechTransition[] {
  const out: SpeechTransition[] = [];
  probabilities.forEach((p, i) => {
    const t = detector.push(p, (i + 1) * 20, 20);
    if (t) out.push(t);
  });
  return out;
}

const frames = (n: number, p: number) => Array<number>(n).fill(p);

describe("SpeechDetector", () => {
  it("starts after startMs of speech and ends after endpointing_ms of silence", () => {
    const d = new SpeechDetector({ endpointingMs: 500 });
    const t = run(d, [...frames(10, 0), ...frames(50, 0.9), ...frames(30, 0.05)]);
    expect(t).toEqual([
      { type: "speech_start", atMs: 200 },
      { type: "speech_end", atMs: 1200, speechMs: 1000 },
    ]);
  });

  it("ignores clicks shorter than startMs and pauses shorter than endpointing_ms", () => {
    const d = new SpeechDetector({ endpointingMs: 300 });
    const t = run(d, [...frames(2, 0.9), ...frames(5, 0), ...frames(20, 0.9), ...frames(10, 0.1), ...frames(20, 0.9), ...frames(15, 0)]);
    expect(t.map((x) => x.type)).toEqual(["speech_start", "speech_end"]);
    expect(t[1]).toMatchObject({ atMs: 57 * 20 });
  });

  it("counts speech up to the last voiced frame, not the silence after it", () => {
    const d = new SpeechDetector({ endpointingMs: 500 });
    run(d, [...frames(30, 0.9), ...frames(10, 0)]);
    expect(d.isSpeaking).toBe(true);
    expect(d.currentSpeechMs()).toBe(600);
  });

  it("uses hysteresis: probabilities between the thresholds keep the current state", () => {
    const d = new SpeechDetector({ endpointingMs: 200 });
    const t = run(d, [...frames(5, 0.9), ...frames(30, 0.4), ...frames(10, 0.1)]);
    expect(t.map((x) => x.type)).toEqual(["speech_start", "speech_end"]);
    expect(t[1]).toMatchObject({ atMs: 700 });
  });
});

describe("SpeechDetector with frame levels", () => {
  /** Feeds 20 ms frames of [probability, level]; returns the transitions with the frame end they came at. */
  function runLevels(detector: SpeechDetector, frames: Array<[number, number]>): Array<SpeechTransition & { at: number }> {
    const out: Array<SpeechTransition & { at: number }> = [];
    frames.forEach(([p, level], i) => {
      const t = detector.push(p, (i + 1) * 20, 20, level);
      if (t) out.push({ ...t, at: (i + 1) * 20 });
    });
    return out;
  }
  const run = (n: number, p: number, level: number) => Array.from({ length: n }, (): [number, number] => [p, level]);

  it("ends speech where the sound stopped, not where the VAD's probability decayed", () => {
    const d = new SpeechDetector({ endpointingMs: 500 });
    // 1 s of speech, 3 frames of the VAD's decaying tail 40 dB down, then silence.
    const t = runLevels(d, [...run(50, 0.9, 0.1), ...run(3, 0.8, 0.001), ...run(40, 0.05, 0.0005)]);
    expect(t).toEqual([
      { type: "speech_start", atMs: 0, at: 60 },
      { type: "speech_end", atMs: 1000, speechMs: 1000, at: 1500 },
    ]);
  });

  it("keeps quieter speech (20 dB down) as speech", () => {
    const d = new SpeechDetector({ endpointingMs: 500 });
    const t = runLevels(d, [...run(50, 0.9, 0.1), ...run(10, 0.8, 0.01), ...run(40, 0.05, 0.0005)]);
    expect(t[1]).toMatchObject({ type: "speech_end", atMs: 1200, at: 1700 });
  });

  it("still waits for the VAD to hear silence", () => {
    const d = new SpeechDetector({ endpointingMs: 300 });
    // A long quiet voiced stretch (breath) after the words: no end until 200 ms after the VAD falls.
    const t = runLevels(d, [...run(20, 0.9, 0.1), ...run(30, 0.8, 0.0005), ...run(20, 0.05, 0.0005)]);
    expect(t[1]).toMatchObject({ type: "speech_end", atMs: 400, at: 1200 });
  });
});

describe("backchannels and interrupt words", () => {
  it.each(["okay", "OK.", "uh huh", "mm-hmm", "yeah yeah", "right okay", "", "all right"])("%j is a backchannel", (text) => {
    expect(isBackchannel(text)).toBe(true);
  });
  it.each(["okay but i want tuesday", "what time", "hold on", "stop"])("%j is not a backchannel", (text) => {
    expect(isBackchannel(text)).toBe(false);
  });
  it.each(["stop", "wait a second", "no no", "hold on please", "okay hold on"])("%j asks to interrupt", (text) => {
    expect(isInterruptRequest(text)).toBe(true);
  });
  it.each(["okay", "nothing", "i know", "stopwatch"])("%j does not ask to interrupt", (text) => {
    expect(isInterruptRequest(text)).toBe(false);
  });
});

describe("BargeInPolicy", () => {
  it("waits 100 + (1 - threshold) * 500 ms of speech", () => {
    expect(bargeInDelayMs(0.5)).toBe(350);
    expect(bargeInDelayMs(1)).toBe(100);
    expect(bargeInDelayMs(0)).toBe(600);
    const p = new BargeInPolicy({ interruptionThreshold: 0.5 });
    expect(p.shouldInterrupt(340, "can i")).toBe(false);
    expect(p.shouldInterrupt(360, "can i")).toBe(true);
  });

  it("lets short backchannels through, but not long speech", () => {
    const p = new BargeInPolicy({ interruptionThreshold: 0.5, backchannelMaxMs: 900 });
    expect(p.shouldInterrupt(500, "okay")).toBe(false);
    expect(p.shouldInterrupt(500, "")).toBe(false);
    expect(p.shouldInterrupt(900, "okay")).toBe(true);
    expect(p.interruptsAfterFinal("okay")).toBe(false);
    expect(p.interruptsAfterFinal("")).toBe(false);
    expect(p.interruptsAfterFinal("tuesday")).toBe(true);
  });

  it("interrupts at once on a stop word", () => {
    const p = new BargeInPolicy({ interruptionThreshold: 0 });
    expect(p.shouldInterrupt(120, "wait")).toBe(true);
    expect(p.shouldInterrupt(120, "okay")).toBe(false);
  });
});

describe("end_call_phrases", () => {
  it("match whole words, case and punctuation aside", async () => {
    const { matchEndCallPhrase } = await import("../../../../engine/turn/end-call-phrases.js");
    expect(matchEndCallPhrase("Okay, goodbye!", ["goodbye", "have a nice day"])).toBe("goodbye");
    expect(matchEndCallPhrase("you have a nice day now", ["goodbye", "have a nice day"])).toBe("have a nice day");
    expect(matchEndCallPhrase("goodbyes are hard", ["goodbye"])).toBeNull();
    expect(matchEndCallPhrase("anything", [])).toBeNull();
  });
});
