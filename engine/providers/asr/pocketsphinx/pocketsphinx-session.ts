import type { AudioFrame } from "../../../audio/audio-frame.js";
import type { AsrResult, AsrSession } from "../asr-provider.js";
import { AsrError } from "../asr-error.js";
import { AsrUpsampler } from "../asr-upsampler.js";
import { abortable } from "../../../stream/abortable.js";
import type { RecognizerPool } from "./recognizer-pool.js";
import { describeExit, type RecognizerExit, type RecognizerProcess } from "./recognizer-process.js";
import type { ExpectedSpeech } from "../expected-speech.js";
import {
  encodeAudio,
  encodeGrammar,
  encodeMean,
  encodeRequest,
  encodeUtteranceRequest,
  REQUEST,
  type RecognizerReply,
  type UtteranceReply,
} from "./recognizer-protocol.js";

/**
 * Utterance ids, unique across sessions: a recognizer serves call after call, and a late
 * reply of an earlier call's utterance must not match an utterance of the next call.
 */
let lastUtteranceId = 0;

function newUtteranceId(): number {
  lastUtteranceId = (lastUtteranceId + 1) >>> 0 || 1;
  return lastUtteranceId;
}

function closedDuringUtterance(): AsrError {
  return new AsrError("closed", "the pocketsphinx session was closed during an utterance", { retryable: false });
}

/**
 * One call's speech recognition. A recognizer is leased from the pool while the caller speaks
 * (from an utterance's start to the final of the last utterance under way) and given back
 * between turns, so a call that rings, listens or hears the agent holds none. The channel
 * adaptation (cepstral mean) each final reports is carried to the next recognizer leased, so
 * the call is read as if one process served it throughout.
 *
 * With what the agent expects (`expected`), the utterance is decoded twice as it arrives: by the
 * general model (its partials) and by a grammar of such answers (`grammarFor`). The grammar's
 * words are the final when it had a path for the utterance (every path holds an answer), the
 * general model's otherwise (an answer to another question, a question back).
 *
 * Utterances may overlap (the next one can start while the last waits for its final): their
 * audio reaches the recognizer one utterance after the other, and replies are matched by
 * utterance id. If the recognizer dies, the utterances under way reject with
 * `recognizer_crashed` and the next one runs on a new recognizer.
 */
export class PocketsphinxSession implements AsrSession {
  private readonly utterances = new Set<Utterance>();
  /** Settles once every utterance so far has written all it will write to the recognizer. */
  private written: Promise<void> = Promise.resolve();
  private closed = false;
  /** The recognizer leased while utterances are under way; undefined between them and after a death. */
  private recognizer: RecognizerProcess | undefined;
  /** The channel mean of the call's last final: where the next recognizer starts from. */
  private mean: number[] | undefined;
  /** The grammar the leased recognizer was last given (it keeps it between utterances). */
  private grammarSent: string | null = null;
  /** The last expectation's grammar: a call asks one question until it is answered, so it is built once. */
  private lastGrammar: { expected: string; jsgf: string | null } | undefined;

  constructor(
    private readonly pool: RecognizerPool,
    /** The JSGF of answers to `expected`, or null when there is nothing to listen for. */
    private readonly grammarFor: (expected: ExpectedSpeech) => string | null,
  ) {}

  async *transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal, expected?: ExpectedSpeech): AsyncIterable<AsrResult> {
    if (this.closed) throw new AsrError("closed", "the pocketsphinx session is closed", { retryable: false });
    signal.throwIfAborted();
    const utterance = new Utterance(newUtteranceId(), signal);
    const previous = this.written;
    this.written = previous.then(() => utterance.written);
    this.utterances.add(utterance);
    try {
      await abortable(previous, signal);
      if (this.closed) throw closedDuringUtterance();
      const recognizer = await this.liveRecognizer(signal);
      utterance.attach(recognizer);
      const grammar = expected ? this.grammarOf(expected) : null;
      void this.stream(audio, recognizer, utterance, grammar);
      for (;;) {
        const reply = await utterance.next();
        if (reply.type === "error") {
          throw new AsrError("recognition_failed", `pocketsphinx failed to decode the utterance: ${reply.message}`, { retryable: true });
        }
        if (reply.type === "partial") {
          yield { type: "partial", text: reply.text };
        } else {
          this.mean = reply.mean;
          // The grammar's words are empty when it had no path for the utterance.
          yield { type: "final", text: grammar !== null && reply.expected ? reply.expected : reply.text };
          return;
        }
      }
    } finally {
      // Aborted, failed, or the consumer stopped reading: the recognizer drops the utterance.
      utterance.cancel();
      utterance.detach();
      this.utterances.delete(utterance);
      // The caller has stopped speaking: the recognizer serves other calls until they speak again.
      if (this.utterances.size === 0) this.giveBack();
    }
  }

  private grammarOf(expected: ExpectedSpeech): string | null {
    const key = JSON.stringify(expected);
    if (this.lastGrammar?.expected !== key) this.lastGrammar = { expected: key, jsgf: this.grammarFor(expected) };
    return this.lastGrammar.jsgf;
  }

  /** Ends the utterances under way (they reject) and gives the recognizer back to the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Cancelled before the release: once released, the recognizer may serve another call.
    for (const utterance of this.utterances) {
      utterance.fail(closedDuringUtterance());
    }
    this.giveBack();
  }

  private giveBack(): void {
    if (!this.recognizer) return;
    this.pool.release(this.recognizer);
    this.recognizer = undefined;
  }

  /**
   * The leased recognizer, or a newly leased one (in place of a dead one too), set to this
   * call's channel. Utterances call this one at a time.
   */
  private async liveRecognizer(signal: AbortSignal): Promise<RecognizerProcess> {
    if (this.recognizer?.alive) return this.recognizer;
    this.giveBack();
    const recognizer = await this.pool.acquire(signal);
    if (this.closed) {
      this.pool.release(recognizer);
      throw closedDuringUtterance();
    }
    this.recognizer = recognizer;
    this.grammarSent = null;
    // Another call's adaptation must not colour this one's: its own mean, or the model's prior.
    await recognizer.send(this.mean ? encodeMean(this.mean) : encodeRequest(REQUEST.reset));
    return recognizer;
  }

  /** Feeds the utterance's audio at 16 kHz, then ends it; writes nothing once the utterance is over. */
  private async stream(audio: AsyncIterable<AudioFrame>, recognizer: RecognizerProcess, utterance: Utterance, grammar: string | null): Promise<void> {
    try {
      const upsampler = new AsrUpsampler();
      if (utterance.over) return;
      if (grammar !== this.grammarSent) {
        this.grammarSent = grammar;
        await recognizer.send(encodeGrammar(grammar));
      }
      await recognizer.send(encodeUtteranceRequest(REQUEST.startUtterance, utterance.id));
      for await (const frame of audio) {
        const samples = upsampler.process(frame);
        // Checked right before each write: nothing of this utterance may follow its cancel.
        if (utterance.over) return;
        await recognizer.send(encodeAudio(samples));
      }
      if (!utterance.over) await recognizer.send(encodeRequest(REQUEST.endUtterance));
    } catch (error) {
      utterance.fail(error);
    } finally {
      utterance.doneWriting();
    }
  }
}

/**
 * One utterance: its replies as a queue the generator awaits, fed by the recognizer and ended
 * early by an abort, a crash, a failure of the audio stream or the session's close.
 */
class Utterance {
  /** Resolves once the utterance writes nothing more to the recognizer. */
  readonly written: Promise<void>;
  private resolveWritten!: () => void;
  private recognizer: RecognizerProcess | undefined;
  /** The recognizer is done with the utterance: final or error received, or cancelled. */
  private settled = false;
  private readonly replies: UtteranceReply[] = [];
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private readonly onAbort = () => this.fail(this.signal.reason);
  private readonly onReply = (reply: RecognizerReply) => {
    if (reply.type === "ready" || reply.utt !== this.id) return;
    if (reply.type !== "partial") this.settled = true;
    this.replies.push(reply);
    this.wake?.();
  };
  private readonly onExit = (exit: RecognizerExit) => {
    const message = `the pocketsphinx recognizer (pid ${this.recognizer?.pid}) died during the utterance (${describeExit(exit)}); the next utterance gets a new one`;
    this.fail(new AsrError("recognizer_crashed", message, { retryable: true }));
  };

  constructor(
    readonly id: number,
    private readonly signal: AbortSignal,
  ) {
    this.written = new Promise((resolve) => (this.resolveWritten = resolve));
  }

  doneWriting(): void {
    this.resolveWritten();
  }

  /** Ended for any reason: its audio must not reach the recognizer any more. */
  get over(): boolean {
    return this.settled || this.failure !== undefined;
  }

  /** Starts listening to the recognizer and the signal (which may have fired while a recognizer was acquired). */
  attach(recognizer: RecognizerProcess): void {
    this.recognizer = recognizer;
    recognizer.on("reply", this.onReply).on("exit", this.onExit);
    // Died since it was handed over: its exit event has been and gone.
    if (recognizer.exit) this.onExit(recognizer.exit);
    if (this.signal.aborted) this.onAbort();
    else this.signal.addEventListener("abort", this.onAbort, { once: true });
  }

  detach(): void {
    this.signal.removeEventListener("abort", this.onAbort);
    this.recognizer?.off("reply", this.onReply).off("exit", this.onExit);
  }

  /** Ends the utterance with `error` (the first one wins) and cancels it in the recognizer. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.cancel();
    this.wake?.();
  }

  /** Tells the recognizer to drop the utterance, once, unless it is done with it. */
  cancel(): void {
    if (!this.settled) {
      this.settled = true;
      // send() writes before its first await: the cancel is in the pipe when this returns.
      void this.recognizer?.send(encodeUtteranceRequest(REQUEST.cancel, this.id));
    }
    this.doneWriting();
  }

  async next(): Promise<UtteranceReply> {
    for (;;) {
      if (this.failure) throw this.failure.error;
      const reply = this.replies.shift();
      if (reply) return reply;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
