import { Replayable } from "../../stream/replayable.js";
import type { AudioFrame } from "../../audio/audio-frame.js";
import { isRetryable } from "../provider-error.js";
import type { ProviderChain } from "../provider-chain.js";
import type { ExpectedSpeech } from "./expected-speech.js";
import type { AsrProvider, AsrResult, AsrSession } from "./asr-provider.js";

/**
 * The recognizers of a chain behind one (see ProviderChain): a call opens the first that opens;
 * an utterance the serving recognizer fails before its first result is recognized by the next
 * from its first frame (kept while it was sent), and the call goes on. Recognizers are opened
 * for a call only when first needed, and closed with it.
 */
export class FallbackAsrProvider implements AsrProvider {
  readonly name: string;

  constructor(private readonly chain: ProviderChain<AsrProvider>) {
    this.name = chain.links[0]!.name;
  }

  async open(options: Parameters<AsrProvider["open"]>[0]): Promise<AsrSession> {
    const opened = new Map<number, Promise<AsrSession>>();
    const sessionOf = (i: number) => {
      let session = opened.get(i);
      if (!session) {
        session = this.chain.links[i]!.open(options);
        opened.set(i, session);
        // A failed opening is tried again by a later utterance, not kept.
        session.catch(() => opened.get(i) === session && opened.delete(i));
      }
      return session;
    };
    // The call's recognition works when one of them opens: the first that does.
    const order = this.chain.order();
    for (const [position, i] of order.entries()) {
      try {
        await sessionOf(i);
        break;
      } catch (error) {
        if (position === order.length - 1 || options.signal.aborted || !isRetryable(error)) throw error;
        this.chain.switchFrom(i, order[position + 1]!, "error");
      }
    }
    const chain = this.chain;
    return {
      transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal, expected?: ExpectedSpeech): AsyncIterable<AsrResult> {
        const frames = new Replayable(audio);
        return chain.serve(async function* (i, attemptSignal) {
          yield* (await sessionOf(i)).transcribe(frames.reader(), attemptSignal, expected);
        }, signal);
      },
      async close() {
        await Promise.allSettled([...opened.values()].map(async (session) => (await session).close()));
      },
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.chain.links.map((link) => link.close?.()));
  }
}
