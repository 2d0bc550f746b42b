import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExpectedSpeech } from "../../../../../engine/providers/asr/expected-speech.js";
import { answerGrammar } from "../../../../../engine/providers/asr/pocketsphinx/answer-grammar.js";
import { dictionaryWords } from "../../../../../engine/providers/asr/pocketsphinx/dictionary-words.js";
import { DEFAULT_MODEL_DIR, PocketsphinxProvider } from "../../../../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { speak } from "../../../../helpers/flite-speech.js";
import { ensureRecognizerBuilt } from "./built-recognizer.js";
import { speechFrames } from "./speech-frames.js";
import { downsampleTo8k, throughMuLaw } from "./telephony-channel.js";

// Recognition directed by what the agent expects (issue 30): the grammar of answers beside the
// general model, over the real recognizer process.

let knows: (word: string) => boolean;
beforeAll(async () => {
  const words = await dictionaryWords(DEFAULT_MODEL_DIR);
  knows = (word) => words.has(word);
});

const expecting = (answer: ExpectedSpeech["answer"], more: Partial<ExpectedSpeech> = {}): ExpectedSpeech => ({
  answer,
  services: ["Cleaning", "Teeth Whitening"],
  names: [],
  ...more,
});

describe("the grammar of answers", () => {
  it("names only words the recognizer's dictionary has, and nothing when no answer is left", () => {
    const grammar = answerGrammar(expecting("service", { services: ["Cleaning", "Invisalignz Fitting"] }), knows)!;
    expect(grammar).toMatch(/<service> = cleaning;/);
    expect(grammar).not.toMatch(/invisalignz/);
    expect(answerGrammar(expecting("service", { services: ["Invisalignz"] }), knows)).toBeNull();
    // Spelling as callers say it: punctuation and hyphens go.
    expect(answerGrammar(expecting("service", { services: ["Check-up!"] }), knows)).toMatch(/<service> = check up;/);
  });

  it("reduces JSGF syntax in a service or a name to the words around it", () => {
    const grammar = answerGrammar(expecting("service", { services: ["<cleaning> | public <x> = ; whitening", "checkup;"] }), knows)!;
    // One rule line per rule, each alternative plain words: nothing of the names' syntax survives.
    expect(grammar).toMatch(/^<service> = cleaning public x whitening \| checkup;$/m);
    expect(grammar.match(/^public /gm)).toHaveLength(1);
    const named = answerGrammar(expecting("name", { names: ["Ann <x> | (Lee);"] }), knows)!;
    expect(named).toMatch(/<first> = [^;]*\bann\b/);
    expect(named).not.toMatch(/\(lee\)|<x>/);
  });

  it("keeps the call's own name for the caller beside the common ones", () => {
    const grammar = answerGrammar(expecting("name", { names: ["Oliver Bishop"] }), knows)!;
    expect(grammar).toMatch(/<first> = [^;]*\boliver\b/);
    expect(grammar).toMatch(/<last> = [^;]*\bbishop\b/);
  });
});

describe("directed recognition (real recognizer, phone line)", () => {
  let provider: PocketsphinxProvider;
  beforeAll(() => {
    ensureRecognizerBuilt();
    provider = new PocketsphinxProvider({ maxRecognizers: 1 });
  }, 120_000);
  afterAll(() => provider.close());

  /** The final of `text` said in Flite's awb voice over a phone line, listening for `expected` (or nothing). */
  async function hear(text: string, expected?: ExpectedSpeech): Promise<string> {
    const { samples } = await speak(text, "awb");
    const phone = throughMuLaw(downsampleTo8k(samples));
    const session = await provider.open({ language: "en-US", signal: new AbortController().signal });
    try {
      let final = "";
      for await (const result of session.transcribe(speechFrames(phone, 8000), new AbortController().signal, expected)) if (result.type === "final") final = result.text;
      return final;
    } finally {
      await session.close();
    }
  }

  it("hears an answer in the grammar's words when the agent asked for it", async () => {
    expect(await hear("how about tuesday at three in the afternoon", expecting("date"))).toMatch(/\btuesday at three in the afternoon\b/);
    expect(await hear("my name is oliver bishop", expecting("name", { names: ["Oliver Bishop"] }))).toMatch(/\boliver bishop$/);
    expect(await hear("i would like a teeth whitening please", expecting("service"))).toMatch(/\bteeth whitening\b/);
  }, 60_000);

  it("keeps the general model's words for speech the grammar has no path for", async () => {
    // A service of forty words: half a second of speech cannot be a request for it.
    const words = "one two three four five six seven eight nine ten".split(" ");
    const unreachable = expecting("service", { services: [[...words, ...words, ...words, ...words].join(" ")] });
    // The grammar's decoding is empty (no path): the final is the general model's words, not nothing.
    const final = await hear("can i speak to a human please", unreachable);
    expect(final).toMatch(/\bhuman\b/);
    expect(final).not.toMatch(/one two three/);
  }, 60_000);
});
