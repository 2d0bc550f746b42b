import type { AudioFrame } from "../../audio/audio-frame.js";
import { AsyncQueue } from "../../stream/async-queue.js";
import { retryBeforeFirstItem, type RetryPolicy } from "../provider-retry.js";
import { prefetchInOrder } from "./prefetch-in-order.js";
import type { SpeechChunk } from "./tts-provider.js";

/** Sentences requested ahead of the one being streamed: hides the next one's time to first byte. */
const SENTENCES_AHEAD = 1;

export interface SentenceSpeechOptions {
  /** Aborting stops at once: the iteration ends and every request in flight is cancelled. */
  signal: AbortSignal;
  /** Retries of a sentence that fails retryably before its first audio. */
  retry: RetryPolicy;
  /**
   * One request for one sentence (trimmed, with something to say): its audio as it streams in.
   * Fails with the provider's ProviderError; ends quietly once `signal` aborts.
   */
  speak(input: string, signal: AbortSignal): AsyncIterable<AudioFrame>;
}

/**
 * The text-to-speech pipeline of the providers that answer one request per sentence
 * (OpenAI-compatible speech, ElevenLabs, Festival's processes): each piece of text is one request, the next one is
 * started while the current one streams (and read into memory so the server is never held
 * up), and audio is yielded strictly in piece order, tagged with its piece's index. Pieces
 * with no letter or digit (punctuation or emoji alone) are not sent: nothing to say, and some
 * servers refuse them.
 */
export async function* speakSentences(text: AsyncIterable<string>, options: SentenceSpeechOptions): AsyncGenerator<SpeechChunk> {
  const { signal, retry, speak } = options;
  if (signal.aborted) return;
  // Also cancels the requests still running when the consumer stops early without aborting.
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    let pieces = 0;
    const sentences = prefetchInOrder(
      text,
      (text) => {
        const piece = pieces++;
        const input = text.trim();
        return /[\p{L}\p{N}]/u.test(input) ? Promise.resolve({ audio: fetchSentence(() => speak(input, stop.signal), retry, stop.signal), piece }) : undefined;
      },
      { ahead: SENTENCES_AHEAD, signal: stop.signal },
    );
    for await (const { audio, piece } of sentences) {
      for await (const frame of audio) {
        if (stop.signal.aborted) return;
        yield { ...frame, piece };
      }
      if (stop.signal.aborted) return;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

/** Starts one sentence's request now; its audio arrives in the queue, which fails with the request's error. */
function fetchSentence(attempt: () => AsyncIterable<AudioFrame>, retry: RetryPolicy, signal: AbortSignal): AsyncQueue<AudioFrame> {
  const audio = new AsyncQueue<AudioFrame>();
  void (async () => {
    try {
      for await (const frame of retryBeforeFirstItem(attempt, retry, signal)) audio.push(frame);
      audio.end();
    } catch (error) {
      audio.fail(error);
    }
  })();
  return audio;
}
