import { describe, expect, it } from "vitest";
import { ProviderChain, type ProviderChainOptions, type ProviderSwitch } from "../../../../../engine/providers/provider-chain.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";
import { FallbackTts } from "../../../../../engine/providers/tts/fallback-tts.js";
import type { SpeechChunk, TtsProvider } from "../../../../../engine/providers/tts/tts-provider.js";
import type { VoiceInfo } from "../../../../../engine/providers/tts/voice.js";

const retryable = () => new ProviderError("HTTP 503", { retryable: true });

const voice = (provider: string, name: string, gender: VoiceInfo["gender"]): VoiceInfo => ({ id: `${provider}-${name}`, provider, name, language: "en-US", gender, sample_rate: 16_000 });

/**
 * How a fake TTS speaks: `speak` one chunk per piece; `fail-before-audio` reads `consume` pieces
 * then fails with no audio; `fail-after-audio` speaks the first piece then fails.
 */
type Plan = { kind: "speak" } | { kind: "fail-before-audio"; consume: number } | { kind: "fail-after-audio" } | { kind: "stall" };

class FakeTts implements TtsProvider {
  readonly calls: Array<{ voiceId: string; pieces: string[] }> = [];
  constructor(
    readonly name: string,
    private readonly offered: VoiceInfo[],
    private readonly plan: Plan = { kind: "speak" },
  ) {}

  voices(): readonly VoiceInfo[] {
    return this.offered;
  }

  async *synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const call = { voiceId: options.voiceId, pieces: [] as string[] };
    this.calls.push(call);
    for await (const piece of text) {
      call.pieces.push(piece);
      if (this.plan.kind === "fail-before-audio" && call.pieces.length === this.plan.consume) throw retryable();
      if (this.plan.kind === "fail-before-audio") continue;
      if (this.plan.kind === "stall") {
        // A service that took the sentence and never answers: only the chain's abort ends it.
        await new Promise((resolve) => options.signal.addEventListener("abort", resolve, { once: true }));
        return;
      }
      yield { samples: new Int16Array(160), sampleRate: 16_000, piece: call.pieces.length - 1 };
      if (this.plan.kind === "fail-after-audio") throw retryable();
    }
  }
}

function ttsOf(links: FakeTts[], options: ProviderChainOptions = {}) {
  const switches: ProviderSwitch[] = [];
  const tts = new FallbackTts(new ProviderChain("tts", links, { onSwitch: (change) => switches.push(change), ...options }));
  return { tts, switches };
}

async function* sentences(...texts: string[]): AsyncGenerator<string> {
  yield* texts;
}

async function speak(tts: TtsProvider, voiceId: string, text: AsyncIterable<string>): Promise<{ pieces: number[]; error?: unknown }> {
  const pieces: number[] = [];
  try {
    for await (const chunk of tts.synthesize(text, { voiceId, signal: new AbortController().signal })) pieces.push(chunk.piece!);
    return { pieces };
  } catch (error) {
    return { pieces, error };
  }
}

const A_VOICES = [voice("a", "anna", "female"), voice("a", "adam", "male")];
const B_VOICES = [voice("b", "bob", "male"), voice("b", "bea", "female")];

describe("FallbackTts", () => {
  it("lists the voices of every link", () => {
    const { tts } = ttsOf([new FakeTts("a", A_VOICES), new FakeTts("b", B_VOICES)]);
    expect(tts.voices().map((v) => v.id)).toEqual(["a-anna", "a-adam", "b-bob", "b-bea"]);
    expect(tts.name).toBe("a+b");
  });

  it("refuses a voice offered by two links", () => {
    expect(() => ttsOf([new FakeTts("a", A_VOICES), new FakeTts("b", [A_VOICES[0]!])])).toThrow(/a-anna/);
  });

  it("sends a voice to the link that offers it first, in that voice", async () => {
    const a = new FakeTts("a", A_VOICES);
    const b = new FakeTts("b", B_VOICES);
    const { tts, switches } = ttsOf([a, b]);
    expect(await speak(tts, "b-bea", sentences("One.", "Two."))).toEqual({ pieces: [0, 1] });
    expect(a.calls).toEqual([]);
    expect(b.calls).toEqual([{ voiceId: "b-bea", pieces: ["One.", "Two."] }]);
    expect(switches).toEqual([]);
  });

  it("has the next link say every piece, those the failed one had read too, in its voice of the same gender", async () => {
    const a = new FakeTts("a", A_VOICES, { kind: "fail-before-audio", consume: 2 });
    const b = new FakeTts("b", B_VOICES);
    const { tts, switches } = ttsOf([a, b]);
    expect(await speak(tts, "a-anna", sentences("One.", "Two.", "Three."))).toEqual({ pieces: [0, 1, 2] });
    expect(a.calls).toEqual([{ voiceId: "a-anna", pieces: ["One.", "Two."] }]);
    // b-bea (female) rather than b's first voice (male).
    expect(b.calls).toEqual([{ voiceId: "b-bea", pieces: ["One.", "Two.", "Three."] }]);
    expect(switches).toEqual([{ stage: "tts", from: "a", to: "b", reason: "error" }]);
  });

  it("falls back to the next link's first voice when it has none of the gender", async () => {
    const a = new FakeTts("a", A_VOICES, { kind: "fail-before-audio", consume: 1 });
    const b = new FakeTts("b", [voice("b", "bob", "male"), voice("b", "ben", "male")]);
    const { tts } = ttsOf([a, b]);
    expect(await speak(tts, "a-anna", sentences("One."))).toEqual({ pieces: [0] });
    expect(b.calls.map((c) => c.voiceId)).toEqual(["b-bob"]);
  });

  it("hands on the pieces of a link that failed before the first (the owner is tried first, the others in order)", async () => {
    const a = new FakeTts("a", A_VOICES);
    const b = new FakeTts("b", B_VOICES, { kind: "fail-before-audio", consume: 1 });
    const { tts, switches } = ttsOf([a, b]);
    expect(await speak(tts, "b-bob", sentences("One.", "Two."))).toEqual({ pieces: [0, 1] });
    expect(a.calls).toEqual([{ voiceId: "a-adam", pieces: ["One.", "Two."] }]);
    expect(switches.map((s) => [s.from, s.to])).toEqual([["b", "a"]]);
  });

  it("does not hand on a failure after audio: the error is thrown, the next link never asked", async () => {
    const a = new FakeTts("a", A_VOICES, { kind: "fail-after-audio" });
    const b = new FakeTts("b", B_VOICES);
    const { tts, switches } = ttsOf([a, b]);
    const { pieces, error } = await speak(tts, "a-anna", sentences("One.", "Two."));
    expect(pieces).toEqual([0]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(b.calls).toEqual([]);
    expect(switches).toEqual([]);
  });

  it("does not blame a link for its text's failure (the dialogue failing): the error is thrown, with no switch", async () => {
    const dialogueFailure = new ProviderError("the language model failed", { retryable: true });
    const a = new FakeTts("a", A_VOICES);
    const b = new FakeTts("b", B_VOICES);
    const { tts, switches } = ttsOf([a, b]);
    const failingText = (async function* () {
      throw dialogueFailure;
    })();
    expect(await speak(tts, "a-anna", failingText)).toEqual({ pieces: [], error: dialogueFailure });
    expect(switches).toEqual([]);
    expect(b.calls).toEqual([]);
  });

  // The first-audio clock starts with the first sentence: a dialogue slow to say anything (a
  // tool running) must not make the voice's owner "time out" and another voice speak.
  it("does not time out a link still waiting for its first sentence", async () => {
    const a = new FakeTts("a", A_VOICES);
    const b = new FakeTts("b", B_VOICES);
    const { tts, switches } = ttsOf([a, b], { firstOutputTimeoutMs: 50 });
    const slowText = (async function* () {
      await new Promise((resolve) => setTimeout(resolve, 150));
      yield "One.";
    })();
    expect(await speak(tts, "a-anna", slowText)).toEqual({ pieces: [0] });
    expect(switches).toEqual([]);
    expect(b.calls).toEqual([]);
  });

  it("times out a link that has its first sentence and gives no audio: the next says it", async () => {
    const a = new FakeTts("a", A_VOICES, { kind: "stall" });
    const b = new FakeTts("b", B_VOICES);
    const { tts, switches } = ttsOf([a, b], { firstOutputTimeoutMs: 50 });
    const slowText = (async function* () {
      await new Promise((resolve) => setTimeout(resolve, 150));
      yield "One.";
    })();
    expect(await speak(tts, "a-anna", slowText)).toEqual({ pieces: [0] });
    expect(switches.map((s) => [s.from, s.to, s.reason])).toEqual([["a", "b", "timeout"]]);
    expect(b.calls.map((c) => c.pieces)).toEqual([["One."]]);
  });
});
