import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AsrResult, AsrSession } from "../../../../../engine/providers/asr/asr-provider.js";
import { PocketsphinxProvider } from "../../../../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { speak } from "../../../../helpers/flite-speech.js";
import { ensureRecognizerBuilt } from "./built-recognizer.js";
import { speechFrames } from "./speech-frames.js";
import { wordOverlap } from "../../../../../scripts/eval/word-error-rate.js";

let provider: PocketsphinxProvider;

beforeAll(() => {
  ensureRecognizerBuilt();
  provider = new PocketsphinxProvider({ maxRecognizers: 1 });
}, 120_000);

afterAll(() => provider.close());

/** `samples` without their trailing silence: the audio stops right after the last word. */
function trimTrailingSilence(samples: Int16Array): Int16Array {
  let end = samples.length;
  while (end > 0 && Math.abs(samples[end - 1]!) < 200) end--;
  return samples.slice(0, end);
}

async function results(session: AsrSession, samples: Int16Array, sampleRate: number): Promise<AsrResult[]> {
  const out: AsrResult[] = [];
  for await (const result of session.transcribe(speechFrames(samples, sampleRate), new AbortController().signal)) out.push(result);
  return out;
}

/**
 * "Finish now" is the end of an utterance's audio: the recognizer gives the final of what it
 * has at once, with no silence after the speech and no endpointing of its own. Adaptive
 * endpointing finishes the caller's words at each short pause this way.
 */
describe("pocketsphinx: finishing an utterance now", () => {
  it("gives the final, last word included, for speech cut right after its last word", async () => {
    const { samples, sampleRate } = await speak("i would like to book an appointment", "rms");
    const cut = trimTrailingSilence(samples);
    expect(cut.length).toBeLessThan(samples.length);
    const session = await provider.open({ language: "en-US", signal: new AbortController().signal });
    try {
      const heard = await results(session, cut, sampleRate);
      expect(heard.at(-1)?.type).toBe("final");
      expect(heard.filter((r) => r.type === "final")).toHaveLength(1);
      expect(heard.at(-1)!.text).toMatch(/appointment$/);
    } finally {
      await session.close();
    }
  });

  it("reads a sentence said in two parts, each finished at its pause, as the sentence", async () => {
    const first = await speak("i would like to book", "rms");
    const second = await speak("an appointment on tuesday", "rms");
    const session = await provider.open({ language: "en-US", signal: new AbortController().signal });
    try {
      const parts = [];
      for (const part of [first, second]) parts.push((await results(session, trimTrailingSilence(part.samples), part.sampleRate)).at(-1)!.text);
      expect(wordOverlap("i would like to book an appointment on tuesday", parts.join(" "))).toBeGreaterThanOrEqual(0.8);
      expect(parts[1]).toMatch(/tuesday$/);
    } finally {
      await session.close();
    }
  });
});
