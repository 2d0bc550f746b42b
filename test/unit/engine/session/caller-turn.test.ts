import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import type { CallEvent } from "../../../../engine/call-events.js";
import type { AsrResult, AsrSession } from "../../../../engine/providers/asr/asr-provider.js";
import type { ExpectedSpeech } from "../../../../engine/providers/asr/expected-speech.js";
import { CallerTurn, type Utterance } from "../../../../engine/session/caller-turn.js";
import type { TurnCompleteness } from "../../../../engine/turn/turn-completeness.js";
import type { TurnDetector, TurnSignal } from "../../../../engine/turn/turn-detector.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

const frame = (level: number): AudioFrame => ({ samples: new Int16Array(320).fill(level), sampleRate: 16000 });

/**
 * A recognizer that hears each part whole: a partial "<n> frames" after its first frame, then
 * the next of `finals` when its audio ends (a final that is an Error fails the part; null never comes).
 */
function scriptedAsr(finals: Array<string | Error | null>): AsrSession & { heard: number[][]; expected: Array<ExpectedSpeech | undefined> } {
  const heard: number[][] = [];
  const expected: Array<ExpectedSpeech | undefined> = [];
  return {
    heard,
    expected,
    async *transcribe(audio: AsyncIterable<AudioFrame>, _signal: AbortSignal, expecting?: ExpectedSpeech): AsyncIterable<AsrResult> {
      expected.push(expecting);
      const levels: number[] = [];
      heard.push(levels);
      const final = finals.shift();
      for await (const f of audio) {
        levels.push(f.samples[0]!);
        if (levels.length === 1) yield { type: "partial", text: "partial words" };
      }
      if (final === null) await new Promise(() => {});
      if (final instanceof Error) throw final;
      yield { type: "final", text: ` ${final ?? ""} ` };
    },
    close: async () => {},
  };
}

/** CallerTurn with a fake host, input and turn detector, its recognizer `asr` being opened: no call session around it. */
function callerTurn(asr: AsrSession, options: {
    agentSpeaking?: boolean;
    judged?: TurnSignal | null;
    dialogueJudges?: TurnCompleteness;
    ending?: () => boolean;
    expected?: () => ExpectedSpeech | undefined;
  } = {},) {
  const clock = new FakeClock();
  const log: string[] = [];
  const reported: CallEvent[] = [];
  const judged: Array<{ pause: number; completeness: TurnCompleteness; atMs: number }> = [];
  const ended: Array<{ utterance: Utterance; text: string; endpointAt: number }> = [];
  const failed: unknown[] = [];
  const preRoll = [frame(1), frame(2)];
  const detector: TurnDetector = {
    push: () => null,
    judge(pause, completeness, atMs) {
      judged.push({ pause, completeness, atMs });
      return options.judged ?? null;
    },
    lastSpeechEndMs: 0,
    interrupts: () => false,
    interruptsAfterFinal: () => true,
  };
  const turn = new CallerTurn(
    { clock, turnDetector: detector, input: { takePreRoll: () => preRoll.splice(0), inputMs: 4_000 }, signal: new AbortController().signal },
    {
      isEnding: options.ending ?? (() => false),
      report: (e) => reported.push(e),
      spoke: () => log.push("spoke"),
      voiced: (at) => log.push(`voiced ${at}`),
      heard: (words) => log.push(`heard ${words}`),
      isAgentSpeaking: () => options.agentSpeaking ?? false,
      judgeTurn: () => options.dialogueJudges,
      expectedSpeech: options.expected ?? (() => undefined),
      mayEnd: (_u, words) => log.push(`may end: ${words}`),
      ended: (utterance, text, endpointAt) => ended.push({ utterance, text, endpointAt }),
      failed: (_u, _at, err) => failed.push(err),
      broken: (err) => log.push(`broken ${String(err)}`),
    },
  );
  let endMs = 0;
  /** One frame at `level` with `signal`; voiced (the detector's last speech ends with it) unless `voiced` is false. */
  const hear = (level: number, signal: TurnSignal | null = null, voiced = true): boolean => {
    endMs += 20;
    if (voiced) (detector as { lastSpeechEndMs: number }).lastSpeechEndMs = endMs;
    return turn.hear({ frame: frame(level), signal, endMs });
  };
  /** Opens the recognizer: `asr` once `opened` resolves. */
  const open = (opened: Promise<void> = Promise.resolve()) => turn.openRecognizer(async () => (await opened, asr));
  return { clock, turn, hear, open, log, reported, judged, ended, failed };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("CallerTurn", () => {
  it("recognizes a turn from its start (the pre-roll first) to its end, and gives the session its words, start and end", async () => {
    const asr = scriptedAsr(["hello there"]);
    const c = callerTurn(asr);
    await c.open();
    expect(c.hear(9)).toBe(false);
    c.clock.advance(100);
    expect(c.hear(10, { type: "turn_start", atMs: 40 })).toBe(true);
    expect(c.turn.inProgress).toBe(true);
    c.clock.advance(20);
    expect(c.hear(11, null, false)).toBe(true);
    c.clock.advance(300);
    c.hear(12, { type: "turn_end", atMs: 60 }, false);
    expect(c.turn.inProgress).toBe(false);
    await settle();
    expect(asr.heard).toEqual([[1, 2, 10, 11, 12]]);
    expect(c.ended).toHaveLength(1);
    expect(c.ended[0]!.text).toBe("hello there");
    expect(c.ended[0]!.endpointAt).toBe(420);
    expect(c.ended[0]!.utterance).toMatchObject({ startMs: 40, lastVoicedAt: 100, finalAt: 420, partial: "hello there" });
    expect(c.log.filter((l) => !l.startsWith("heard"))).toEqual(["spoke", "voiced 100"]);
    expect(c.reported).toEqual([{ type: "partial_transcript", text: "partial words" }]);
    // Barge-in is judged on the words so far at each frame and each partial.
    expect(c.log).toContain("heard partial words");
    // Frames outside a turn go to the pre-roll.
    expect(c.hear(13)).toBe(false);
  });

  it("listens for no answer in a turn begun while the agent was still speaking", async () => {
    const asr = scriptedAsr(["okay"]);
    const c = callerTurn(asr, { agentSpeaking: true, expected: () => ({ answer: "date", services: [], names: [] }) });
    await c.open();
    c.hear(10, { type: "turn_start", atMs: 0 });
    c.hear(11, { type: "turn_end", atMs: 20 });
    await settle();
    expect(asr.expected).toEqual([undefined]);
  });

  it("gives every part of a turn what the agent had asked for when the turn began", async () => {
    const asr = scriptedAsr(["tuesday", "at three"]);
    const dayAndTime: ExpectedSpeech = { answer: "date", services: [], names: [] };
    let expecting: ExpectedSpeech | undefined = dayAndTime;
    const c = callerTurn(asr, { expected: () => expecting });
    await c.open();
    c.hear(10, { type: "turn_start", atMs: 0 });
    c.hear(11, { type: "pause", atMs: 40, pause: 1 });
    await settle();
    // A reply prepared early during the pause moves the dialogue on; the turn is still the answer to its question.
    expecting = { ...dayAndTime, answer: "name" };
    c.hear(12, { type: "resume", atMs: 60 });
    c.hear(13, { type: "turn_end", atMs: 80 });
    await settle();
    expect(c.ended.map((e) => e.text)).toEqual(["tuesday at three"]);
    expect(asr.expected).toEqual([dayAndTime, dayAndTime]);
  });

  it("finishes a part at a pause and judges the words so far: a turn_end ends the turn at once", async () => {
    const c = callerTurn(scriptedAsr(["next tuesday."]), { judged: { type: "turn_end", atMs: 100 } });
    await c.open();
    c.hear(10, { type: "turn_start", atMs: 0 });
    expect(c.hear(11, { type: "pause", atMs: 40, pause: 1 })).toBe(true);
    expect(c.hear(12)).toBe(false);
    await settle();
    expect(c.judged).toEqual([{ pause: 1, completeness: "complete", atMs: 4_000 }]);
    expect(c.ended.map((e) => e.text)).toEqual(["next tuesday."]);
  });

  it("tells the session a turn may end on words that are complete or unknown, not on incomplete ones, and joins the parts of a turn resumed", async () => {
    const c = callerTurn(scriptedAsr(["purple elephants", "and the", "sing"]));
    await c.open();
    c.hear(10, { type: "turn_start", atMs: 0 });
    c.hear(11, { type: "pause", atMs: 40, pause: 1 });
    await settle();
    c.hear(12, { type: "resume", atMs: 60 });
    c.hear(13, { type: "pause", atMs: 80, pause: 2 });
    await settle();
    c.hear(14, { type: "resume", atMs: 100 });
    c.hear(15, { type: "turn_end", atMs: 120 });
    await settle();
    expect(c.judged.map((j) => j.completeness)).toEqual(["unknown", "incomplete"]);
    expect(c.log.filter((l) => l.startsWith("may end") || l === "spoke")).toEqual(["spoke", "may end: purple elephants", "spoke", "spoke"]);
    expect(c.ended.map((e) => e.text)).toEqual(["purple elephants and the sing"]);
    expect(c.reported.at(-1)).toEqual({ type: "partial_transcript", text: "purple elephants and the partial words" });
  });

  it("judges a backchannel over the agent, and no words at all, a whole turn; else asks the dialogue first", async () => {
    const over = callerTurn(scriptedAsr(["uh huh"]), { agentSpeaking: true, dialogueJudges: "incomplete" });
    await over.open();
    over.hear(10, { type: "turn_start", atMs: 0 });
    over.hear(11, { type: "pause", atMs: 20, pause: 1 });
    const noise = callerTurn(scriptedAsr([""]), { dialogueJudges: "incomplete" });
    await noise.open();
    noise.hear(10, { type: "turn_start", atMs: 0 });
    noise.hear(11, { type: "pause", atMs: 20, pause: 1 });
    const asked = callerTurn(scriptedAsr(["uh huh"]), { dialogueJudges: "incomplete" });
    await asked.open();
    asked.hear(10, { type: "turn_start", atMs: 0 });
    asked.hear(11, { type: "pause", atMs: 20, pause: 1 });
    await settle();
    expect([over, noise, asked].map((c) => c.judged[0]!.completeness)).toEqual(["complete", "complete", "incomplete"]);
  });

  it("reports a turn whose words the recognizer failed as failed, not ended", async () => {
    const err = new Error("recognizer down");
    const c = callerTurn(scriptedAsr([err]));
    await c.open();
    c.hear(10, { type: "turn_start", atMs: 0 });
    c.hear(11, { type: "turn_end", atMs: 20 });
    await settle();
    expect(c.failed).toEqual([err]);
    expect(c.ended).toEqual([]);
  });

  it("keeps speech heard while the recognizer is being opened for it, and gives back a recognizer opened as the call ended", async () => {
    const asr = scriptedAsr(["early words"]);
    const c = callerTurn(asr);
    let ready!: () => void;
    const opening = c.open(new Promise<void>((resolve) => (ready = resolve)));
    c.hear(10, { type: "turn_start", atMs: 0 });
    c.hear(11, { type: "turn_end", atMs: 20 });
    await settle();
    expect(c.ended).toEqual([]);
    ready();
    expect(await opening).toBe(true);
    await settle();
    expect(c.ended.map((e) => e.text)).toEqual(["early words"]);

    let ending = false;
    let closed = 0;
    const late = callerTurn({ ...scriptedAsr([]), close: async () => void closed++ }, { ending: () => ending });
    let lateReady!: () => void;
    const lateOpening = late.open(new Promise<void>((resolve) => (lateReady = resolve)));
    ending = true;
    lateReady();
    expect(await lateOpening).toBe(false);
    expect(closed).toBe(1);
    expect(late.turn.closeRecognizer()).toBeUndefined();
  });

  it("ends the turn in progress for the last words as the call ends, and waits for them no longer than it is told", async () => {
    const c = callerTurn(scriptedAsr(["goodbye"]));
    await c.open();
    c.hear(10, { type: "turn_start", atMs: 0 });
    await c.turn.lastWords(2_000);
    expect(c.turn.inProgress).toBe(false);
    expect(c.ended.map((e) => e.text)).toEqual(["goodbye"]);

    const stuck = callerTurn(scriptedAsr([null]));
    await stuck.open();
    stuck.hear(10, { type: "turn_start", atMs: 0 });
    let waited = false;
    const last = stuck.turn.lastWords(2_000).then(() => (waited = true));
    await settle();
    stuck.clock.advance(1_999);
    await settle();
    expect(waited).toBe(false);
    stuck.clock.advance(1);
    await last;
    expect(stuck.ended).toEqual([]);
    expect(stuck.clock.pendingTimers).toBe(0);
  });
});
