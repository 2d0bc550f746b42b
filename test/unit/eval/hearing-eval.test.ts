import { describe, expect, it } from "vitest";
import type { AsrProvider } from "../../../engine/providers/asr/asr-provider.js";
import type { ExpectedSpeech } from "../../../engine/providers/asr/expected-speech.js";
import { bookingConversations } from "../../../scripts/eval/hearing-corpus.js";
import { evaluateHearing, hearingOptions, hearingTable } from "../../../scripts/eval/hearing-eval.js";
import { runConversation, summarize } from "../../../scripts/eval/hearing-run.js";
import { UsageError } from "../../../src/cli/args.js";

/**
 * A recognizer that hears line n as `heard[n]` (the line's audio, see `lineAudio`, is n + 1
 * frames long), and notes what it was told to expect.
 */
function scriptedAsr(heard: string[]): AsrProvider & { expected: Array<ExpectedSpeech["answer"] | undefined> } {
  const expected: Array<ExpectedSpeech["answer"] | undefined> = [];
  return {
    name: "scripted",
    expected,
    open: async () => ({
      async *transcribe(audio, _signal, expecting) {
        expected.push(expecting?.answer);
        let frames = 0;
        for await (const _frame of audio) frames++;
        yield { type: "final" as const, text: heard[frames - 1] ?? "" };
      },
      close: async () => {},
    }),
  };
}

/** Silence as long as the line's place in the conversation: 20 ms for the first, 40 for the second... */
const lineAudio = (lines: readonly string[]) => async (text: string) => ({ samples: new Int16Array(320 * (lines.indexOf(text) + 1)), sampleRate: 16000 });
const clean = { name: "clean", degrade: (speech: { samples: Int16Array; sampleRate: number }) => speech };

describe("the hearing evaluation", () => {
  it("scores a conversation heard perfectly as every slot right and no word error, and one misheard day as the date wrong", async () => {
    const [conversation] = bookingConversations("test", 1);
    const render = lineAudio(conversation!.lines);
    const asr = scriptedAsr([...conversation!.lines]);
    const perfect = await runConversation(conversation!, { asr, render, channel: clean, phone: true, directed: true });
    // Each line listened to for what the agent had asked.
    expect(asr.expected).toEqual([undefined, "date", "name", "yes_no"]);
    expect(perfect.slots).toEqual({ service: true, date: true, time: true, customer_name: true, yes: true });
    expect(perfect.bookedRight).toBe(true);
    expect(perfect.lines.every((line) => line.wer === 0)).toBe(true);

    const misheard = [...conversation!.lines];
    misheard[1] = misheard[1]!.replace(/monday|tuesday|thursday/, "saturday");
    const wrongDay = await runConversation(conversation!, { asr: scriptedAsr(misheard), render, channel: clean, phone: true, directed: false });
    // The day alone misheard: that slot wrong, the others understood, the booking not right.
    expect(wrongDay.slots).toEqual({ service: true, date: false, time: true, customer_name: true, yes: true });
    expect(wrongDay.bookedRight).toBe(false);
    const summary = summarize("clean", [perfect, wrongDay]);
    expect(summary).toMatchObject({ conversations: 2, utterances: 8, bookingAccuracy: 0.5 });
    expect(summary.slotAccuracy).toEqual({ service: 1, date: 0.5, time: 1, customer_name: 1, yes: 1 });
    expect(summary.wer).toBeGreaterThan(0);
  });

  // The evaluation at CI size: the real recognizer, Festival and eSpeak NG voices, babble noise.
  it("runs at a small size on the test set with the real recognizer, and reports every condition", async () => {
    const report = await evaluateHearing(hearingOptions(["--size", "small", "--noise", "clean,10"]));
    expect(report).toMatchObject({ set: "test", size: "small", line: "phone", noiseKind: "babble" });
    expect(report.conditions.map((c) => [c.channel, c.conversations, c.utterances])).toEqual([
      ["clean", 3, 12],
      ["10 dB babble", 3, 12],
    ]);
    for (const c of report.conditions) expect(c.wer).toBeGreaterThanOrEqual(0);
    expect(report.transcripts).toHaveLength(24);
    expect(report.human?.clips).toBe(3);
    console.info(hearingTable(report));
  }, 120_000);

  it("refuses bad options by name", () => {
    expect(() => hearingOptions(["--set", "train"])).toThrow(UsageError);
    expect(hearingOptions(["--denoise", "--undirected"])).toMatchObject({ denoise: true, directed: false });
    expect(() => hearingOptions(["--noise", "clean,loud"])).toThrow(/--noise/);
  });
});
