import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { SpeechCache } from "../../../../../engine/providers/tts/speech-cache.js";
import type { TtsProvider } from "../../../../../engine/providers/tts/tts-provider.js";
import { greetingSentences } from "../../../../../engine/text/greeting.js";

/** A TTS that renders each piece as `bytes` of audio holding its length, and counts what it rendered. */
function countingTts(bytes = 200, gate?: Promise<void>) {
  const rendered: string[] = [];
  const tts: TtsProvider = {
    name: "counting",
    voices: () => [],
    async *synthesize(text, options) {
      for await (const piece of text) {
        await gate;
        if (options.signal.aborted) return;
        rendered.push(`${options.voiceId}:${piece}`);
        yield { samples: new Int16Array(bytes / 2).fill(piece.length), sampleRate: 16000 };
      }
    },
  };
  return Object.assign(tts, { rendered });
}

async function say(cache: SpeechCache, sentences: string[], voiceId = "v1", signal = new AbortController().signal): Promise<AudioFrame[]> {
  const out: AudioFrame[] = [];
  for await (const chunk of cache.synthesize(
    (async function* () {
      yield* sentences;
    })(),
    { voiceId, signal },
  ))
    out.push(chunk);
  return out;
}

describe("SpeechCache", () => {
  it("renders a sentence once per voice and says it again from what it kept", async () => {
    const tts = countingTts();
    const cache = new SpeechCache(tts);
    const first = await say(cache, ["Hello.", "How can I help?"]);
    const again = await say(cache, ["Hello.", "How can I help?"]);
    await say(cache, ["Hello."], "v2");
    expect(again).toEqual(first);
    expect(tts.rendered).toEqual(["v1:Hello.", "v1:How can I help?", "v2:Hello."]);
  });

  it("renders ahead with prepare: the call then needs no rendering", async () => {
    const tts = countingTts();
    const cache = new SpeechCache(tts);
    await cache.prepare("v1", ["Hi Ann.", "This is Acme."], new AbortController().signal);
    expect(cache.has("v1", "Hi Ann.")).toBe(true);
    await say(cache, ["Hi Ann.", "This is Acme."]);
    expect(tts.rendered).toHaveLength(2);
  });

  it("renders a sentence two calls need at the same moment only once", async () => {
    let open!: () => void;
    const tts = countingTts(200, new Promise((resolve) => (open = resolve)));
    const cache = new SpeechCache(tts);
    const both = Promise.all([say(cache, ["Hello."]), say(cache, ["Hello."])]);
    open();
    const [a, b] = await both;
    expect(a).toEqual(b);
    expect(tts.rendered).toEqual(["v1:Hello."]);
  });

  it("waits for another call's rendering of a sentence only while its own call lasts (a TTS that never answers)", async () => {
    const tts = countingTts(200, new Promise(() => {}));
    const cache = new SpeechCache(tts);
    void say(cache, ["Hello."]);
    const abort = new AbortController();
    const second = say(cache, ["Hello."], "v1", abort.signal);
    await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    expect(await second).toEqual([]);
  });

  it("keeps at most maxBytes, dropping the least recently said first", async () => {
    const tts = countingTts(400);
    const cache = new SpeechCache(tts, 1000);
    await say(cache, ["one", "two"]);
    await say(cache, ["one"]);
    await say(cache, ["three"]);
    expect(cache.size).toBe(800);
    expect([cache.has("v1", "one"), cache.has("v1", "two"), cache.has("v1", "three")]).toEqual([true, false, true]);
  });

  it("keeps nothing of a rendering that was aborted", async () => {
    const tts = countingTts();
    const cache = new SpeechCache(tts);
    const abort = new AbortController();
    abort.abort();
    await say(cache, ["Hello."], "v1", abort.signal);
    expect(cache.has("v1", "Hello.")).toBe(false);
  });
});

describe("greetingSentences", () => {
  it("fills the placeholders and splits the greeting so its first sentence can go out first", () => {
    const agent = { firstMessage: "Hi {{customer_name}}, this is {{business_name}}. How can I help you today?", metadata: { business_name: "Acme Dental" } };
    expect(greetingSentences(agent, { customer_name: "Ann" })).toEqual(["Hi Ann, this is Acme Dental.", "How can I help you today?"]);
    expect(greetingSentences({ firstMessage: null, metadata: {} }, {})).toEqual([]);
    expect(greetingSentences({ firstMessage: "{{customer_name}}", metadata: {} }, {})).toEqual([]);
  });
});
