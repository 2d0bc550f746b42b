import { describe, expect, it } from "vitest";
import { AdaptiveTurnDetector, COMPLETE_WAIT_MS, PAUSE_MS, UNKNOWN_WAIT_MS } from "../../../../engine/turn/adaptive-turn-detector.js";
import { FixedTurnDetector } from "../../../../engine/turn/fixed-turn-detector.js";
import type { TurnCompleteness } from "../../../../engine/turn/turn-completeness.js";
import type { TurnDetector, TurnSignal } from "../../../../engine/turn/turn-detector.js";

/**
 * A recorded caller timeline, 20 ms frames: runs of speech (VAD 0.9, level 3000) and silence
 * (VAD 0.02, level 30), and the dialogue's judgement of the words at a pause, given when the
 * recognizer's final would come (`judgeAfterMs` into the pause).
 */
type Event = { speech: number } | { silence: number } | { judge: TurnCompleteness; afterMs?: number };

interface Observed extends Record<string, unknown> {
  type: TurnSignal["type"];
  atMs: number;
  /** Where on the timeline the decision was taken (the frame's end). */
  decidedAtMs: number;
}

function play(detector: TurnDetector, events: Event[]): Observed[] {
  const out: Observed[] = [];
  let now = 0;
  let pending: { pause: number; completeness: TurnCompleteness; at: number } | undefined;
  let lastPause = 0;
  const note = (signal: TurnSignal | null) => {
    if (!signal) return;
    if (signal.type === "pause") lastPause = signal.pause;
    out.push({ ...signal, decidedAtMs: now });
  };
  const frame = (speech: boolean) => {
    now += 20;
    note(detector.push({ probability: speech ? 0.9 : 0.02, level: speech ? 3000 : 30, endMs: now, frameMs: 20 }));
    if (pending && now >= pending.at) {
      const judged = pending;
      pending = undefined;
      note(detector.judge(judged.pause, judged.completeness, now));
    }
  };
  for (const event of events) {
    if ("speech" in event) for (let t = 0; t < event.speech; t += 20) frame(true);
    else if ("silence" in event) for (let t = 0; t < event.silence; t += 20) frame(false);
    else pending = { pause: lastPause, completeness: event.judge, at: now + (event.afterMs ?? 0) };
  }
  return out.map(({ pause: _pause, ...rest }) => rest as Observed);
}

const adaptive = () => new AdaptiveTurnDetector({ maxWaitMs: 1500, interruptionThreshold: 0.5 });

describe("AdaptiveTurnDetector", () => {
  it("ends a complete turn COMPLETE_WAIT_MS after its last word, its words judged at the short pause before", () => {
    // 1 s of speech ending at 1000 ms; the pause comes PAUSE_MS later, the final 40 ms after that.
    const signals = play(adaptive(), [{ speech: 1000 }, { silence: PAUSE_MS }, { judge: "complete", afterMs: 40 }, { silence: 2000 }]);
    expect(signals).toEqual([
      { type: "turn_start", atMs: 0, decidedAtMs: 60 },
      { type: "pause", atMs: 1000, decidedAtMs: 1000 + PAUSE_MS },
      { type: "turn_end", atMs: 1000, decidedAtMs: 1000 + COMPLETE_WAIT_MS },
    ]);
  });

  it("ends a complete turn at once when its words are judged after COMPLETE_WAIT_MS (a slow recognizer)", () => {
    const signals = play(adaptive(), [{ speech: 1000 }, { silence: PAUSE_MS }, { judge: "complete", afterMs: 300 }, { silence: 2000 }]);
    expect(signals.at(-1)).toEqual({ type: "turn_end", atMs: 1000, decidedAtMs: 1000 + PAUSE_MS + 300 });
  });

  it("lets a speaker who goes on after a short pause behind complete words keep the turn", () => {
    const signals = play(adaptive(), [{ speech: 1000 }, { silence: 260 }, { judge: "complete" }, { speech: 800 }, { silence: PAUSE_MS }, { judge: "complete" }, { silence: 1000 }]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "pause", "resume", "pause", "turn_end"]);
  });

  it("waits through a mid-sentence pause after words that end open, and the turn goes on with the rest", () => {
    // "I'd like to come in on" ... 800 ms ... "Tuesday at three"
    const signals = play(adaptive(), [
      { speech: 1200 },
      { silence: PAUSE_MS },
      { judge: "incomplete" },
      { silence: 600 },
      { speech: 800 },
      { silence: PAUSE_MS },
      { judge: "complete", afterMs: 20 },
      { silence: 2000 },
    ]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "pause", "resume", "pause", "turn_end"]);
    expect(signals.at(-1)).toMatchObject({ atMs: 2800, decidedAtMs: 2800 + COMPLETE_WAIT_MS });
  });

  it("ends an incomplete turn the caller never finishes at the longest wait after the last word", () => {
    const signals = play(adaptive(), [{ speech: 500 }, { silence: PAUSE_MS }, { judge: "incomplete" }, { silence: 3000 }]);
    expect(signals.at(-1)).toEqual({ type: "turn_end", atMs: 500, decidedAtMs: 500 + 1500 });
  });

  it("waits UNKNOWN_WAIT_MS after words the dialogue cannot judge", () => {
    const signals = play(adaptive(), [{ speech: 500 }, { silence: PAUSE_MS }, { judge: "unknown" }, { silence: 3000 }]);
    expect(signals.at(-1)).toEqual({ type: "turn_end", atMs: 500, decidedAtMs: 500 + UNKNOWN_WAIT_MS });
  });

  it("ends the turn at the longest wait when the words are never judged (a recognizer that does not answer)", () => {
    const signals = play(adaptive(), [{ speech: 500 }, { silence: 3000 }]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "pause", "turn_end"]);
    expect(signals.at(-1)).toMatchObject({ decidedAtMs: 2000 });
  });

  it("ignores a judgement that comes after the caller spoke again: the turn goes on", () => {
    const signals = play(adaptive(), [{ speech: 500 }, { silence: PAUSE_MS }, { judge: "complete", afterMs: 200 }, { silence: 100 }, { speech: 400 }, { silence: 400 }]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "pause", "resume", "pause"]);
  });

  it("does not end the turn on a click, nor pause on a breath shorter than PAUSE_MS", () => {
    const signals = play(adaptive(), [{ speech: 40 }, { silence: 300 }, { speech: 600 }, { silence: PAUSE_MS - 40 }, { speech: 600 }, { silence: PAUSE_MS }]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "pause"]);
  });

  it("never waits longer than the agent's endpointing_ms, however short", () => {
    const detector = new AdaptiveTurnDetector({ maxWaitMs: 150, interruptionThreshold: 0.5 });
    const signals = play(detector, [{ speech: 500 }, { silence: 1000 }]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "turn_end"]);
    expect(signals.at(-1)).toMatchObject({ decidedAtMs: 500 + 160 });
  });
});

describe("FixedTurnDetector", () => {
  it("ends every turn endpointing_ms after the last word, whatever the words, and waits through shorter pauses", () => {
    const detector = new FixedTurnDetector({ endpointingMs: 500, interruptionThreshold: 0.5 });
    const signals = play(detector, [{ speech: 1000 }, { silence: 400 }, { speech: 600 }, { silence: PAUSE_MS }, { judge: "complete" }, { silence: 1000 }]);
    expect(signals).toEqual([
      { type: "turn_start", atMs: 0, decidedAtMs: 60 },
      { type: "turn_end", atMs: 2000, decidedAtMs: 2500 },
    ]);
  });

  it("ends a turn in a pause of endpointing_ms: the caller who pauses longer is cut off", () => {
    const detector = new FixedTurnDetector({ endpointingMs: 500, interruptionThreshold: 0.5 });
    const signals = play(detector, [{ speech: 1000 }, { silence: 700 }, { speech: 600 }, { silence: 600 }]);
    expect(signals.map((s) => s.type)).toEqual(["turn_start", "turn_end", "turn_start", "turn_end"]);
  });
});
