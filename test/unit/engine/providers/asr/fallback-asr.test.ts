import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import type { AsrProvider, AsrResult, AsrSession } from "../../../../../engine/providers/asr/asr-provider.js";
import { FallbackAsrProvider } from "../../../../../engine/providers/asr/fallback-asr.js";
import { ProviderChain, type ProviderSwitch } from "../../../../../engine/providers/provider-chain.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";

const retryable = (message = "HTTP 503") => new ProviderError(message, { retryable: true });

/**
 * A fake recognizer: `open` rejects with `openError` when given; each utterance is read to its
 * end, then either fails (`failUtterances`) with no result or is "recognized" as the count of
 * its frames.
 */
class FakeAsr implements AsrProvider {
  opens = 0;
  closedSessions = 0;
  readonly heard: AudioFrame[][] = [];
  constructor(
    readonly name: string,
    private readonly behaviour: { openError?: Error; failUtterances?: boolean } = {},
  ) {}

  async open(): Promise<AsrSession> {
    this.opens++;
    if (this.behaviour.openError) throw this.behaviour.openError;
    const heard = this.heard;
    const failUtterances = this.behaviour.failUtterances;
    return {
      async *transcribe(audio: AsyncIterable<AudioFrame>): AsyncIterable<AsrResult> {
        const frames: AudioFrame[] = [];
        heard.push(frames);
        for await (const frame of audio) frames.push(frame);
        if (failUtterances) throw retryable("connection lost");
        yield { type: "final", text: `${frames.length} frames` };
      },
      close: async () => void this.closedSessions++,
    };
  }
}

const OPEN = { language: "en-US", sampleRate: 8_000, signal: new AbortController().signal };

function asrOf(links: FakeAsr[]) {
  const switches: ProviderSwitch[] = [];
  const asr = new FallbackAsrProvider(new ProviderChain("asr", links, { onSwitch: (change) => switches.push(change), firstOutputTimeoutMs: 0 }));
  return { asr, switches };
}

const frames = (count: number): AudioFrame[] => Array.from({ length: count }, (_, i) => ({ samples: new Int16Array(160).fill(i), sampleRate: 8_000 }));

async function* utterance(list: AudioFrame[]): AsyncGenerator<AudioFrame> {
  yield* list;
}

async function results(session: AsrSession, audio: AsyncIterable<AudioFrame>): Promise<AsrResult[]> {
  const seen: AsrResult[] = [];
  for await (const result of session.transcribe(audio, new AbortController().signal)) seen.push(result);
  return seen;
}

describe("FallbackAsrProvider", () => {
  it("opens only the first recognizer that opens", async () => {
    const a = new FakeAsr("a");
    const b = new FakeAsr("b");
    const { asr, switches } = asrOf([a, b]);
    await asr.open(OPEN);
    expect([a.opens, b.opens]).toEqual([1, 0]);
    expect(switches).toEqual([]);
  });

  it("falls through a recognizer whose opening fails retryably, and recognizes with the next", async () => {
    const a = new FakeAsr("a", { openError: retryable() });
    const b = new FakeAsr("b");
    const { asr, switches } = asrOf([a, b]);
    const session = await asr.open(OPEN);
    expect(switches).toEqual([{ stage: "asr", from: "a", to: "b", reason: "error" }]);
    expect(await results(session, utterance(frames(3)))).toEqual([{ type: "final", text: "3 frames" }]);
    expect(b.heard).toHaveLength(1);
  });

  it("does not fall through an opening refused for good", async () => {
    const refused = new ProviderError("HTTP 401", { retryable: false });
    const b = new FakeAsr("b");
    const { asr } = asrOf([new FakeAsr("a", { openError: refused }), b]);
    await expect(asr.open(OPEN)).rejects.toBe(refused);
    expect(b.opens).toBe(0);
  });

  it("has the next recognizer recognize an utterance the first failed before any result, from its first frame", async () => {
    const a = new FakeAsr("a", { failUtterances: true });
    const b = new FakeAsr("b");
    const { asr, switches } = asrOf([a, b]);
    const session = await asr.open(OPEN);
    const sent = frames(5);
    expect(await results(session, utterance(sent))).toEqual([{ type: "final", text: "5 frames" }]);
    expect(a.heard[0]).toEqual(sent);
    // The very frames, in order, none missing: those the first had consumed too.
    expect(b.heard[0]).toHaveLength(5);
    b.heard[0]!.forEach((frame, i) => expect(frame).toBe(sent[i]));
    expect(switches).toEqual([{ stage: "asr", from: "a", to: "b", reason: "error" }]);
  });

  it("closes the sessions it opened, and none of a recognizer never used", async () => {
    const a = new FakeAsr("a", { failUtterances: true });
    const b = new FakeAsr("b");
    const c = new FakeAsr("c");
    const { asr } = asrOf([a, b, c]);
    const session = await asr.open(OPEN);
    await results(session, utterance(frames(2)));
    await session.close();
    expect([a.closedSessions, b.closedSessions, c.closedSessions]).toEqual([1, 1, 0]);
    expect(c.opens).toBe(0);
  });
});
