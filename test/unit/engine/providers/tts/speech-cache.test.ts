import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { SpeechCache } from "../../../../../engine/providers/tts/speech-cache.js";
import type { TtsProvider } from "../../../../../engine/providers/tts/tts-provider.js";
import { streamOf } from "../../../../../engine/stream/stream-of.js";
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

  it("renders at the TTS's pace: a call reading slowly holds back neither the rendering nor another call", async () => {
    const signals: AbortSignal[] = [];
    const tts: TtsProvider = {
      name: "three chunks",
      voices: () => [],
      async *synthesize(_text, options) {
        signals.push(options.signal);
        for (let i = 0; i < 3; i++) yield { samples: new Int16Array(80).fill(i), sampleRate: 16000 };
      },
    };
    const cache = new SpeechCache(tts);
    const slow = cache.synthesize(streamOf("Hello."), { voiceId: "v1", signal: new AbortController().signal })[Symbol.asyncIterator]();
    expect((await slow.next()).value.samples[0]).toBe(0);
    // The first call reads no further; the second still gets the whole sentence, and it is kept.
    expect((await say(cache, ["Hello."])).map((c) => c.samples[0])).toEqual([0, 1, 2]);
    expect(cache.has("v1", "Hello.")).toBe(true);
    expect(signals).toHaveLength(1);
    expect((await slow.next()).value.samples[0]).toBe(1);
  });

  it("goes on rendering while any call listens, and stops once the last one has gone", async () => {
    let signal: AbortSignal | undefined;
    const tts: TtsProvider = {
      name: "endless",
      voices: () => [],
      async *synthesize(_text, options) {
        signal = options.signal;
        while (!options.signal.aborted) {
          yield { samples: new Int16Array(80), sampleRate: 16000 };
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      },
    };
    const cache = new SpeechCache(tts);
    const [first, second] = [new AbortController(), new AbortController()];
    const [firstHeard, secondHeard] = [say(cache, ["Hello."], "v1", first.signal), say(cache, ["Hello."], "v1", second.signal)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    first.abort();
    await firstHeard;
    expect(signal!.aborted).toBe(false);
    second.abort();
    expect((await secondHeard).length).toBeGreaterThan(0);
    expect(signal!.aborted).toBe(true);
    expect(cache.has("v1", "Hello.")).toBe(false);
  });

  it("gives every call listening to a failed rendering its error, and keeps nothing", async () => {
    const tts: TtsProvider = {
      name: "failing",
      voices: () => [],
      async *synthesize() {
        yield { samples: new Int16Array(80), sampleRate: 16000 };
        throw new Error("tts down");
      },
    };
    const cache = new SpeechCache(tts);
    const results = await Promise.allSettled([say(cache, ["Hello."]), say(cache, ["Hello."])]);
    expect(results.map((r) => r.status === "rejected" && (r.reason as Error).message)).toEqual(["tts down", "tts down"]);
    expect(cache.has("v1", "Hello.")).toBe(false);
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
