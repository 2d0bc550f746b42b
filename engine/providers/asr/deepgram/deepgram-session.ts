import type { AudioFrame } from "../../../audio/audio-frame.js";
import type { AsrResult, AsrSession } from "../asr-provider.js";
import { AsrError } from "../asr-error.js";
import type { DeepgramClose, DeepgramConnection } from "./deepgram-connection.js";
import type { DeepgramServerEvent } from "./deepgram-protocol.js";

export interface DeepgramSessionConfig {
  /** The rate the stream was opened with: every frame must have it. */
  sampleRate: number;
  /** How long the final may take after `Finalize` before the utterance fails. */
  finalTimeoutMs: number;
  /** Opens a new stream with the session's parameters, for the first utterance after the last stream died. */
  connect(signal: AbortSignal): Promise<DeepgramConnection>;
}

function closedError(): AsrError {
  return new AsrError("closed", "the Deepgram session is closed", { retryable: false });
}

function crashedError(close: DeepgramClose): AsrError {
  const reason = close.reason ? `, ${close.reason}` : "";
  return new AsrError(
    "recognizer_crashed",
    `the Deepgram stream closed during the utterance (code ${close.code}${reason}); the next utterance opens a new one`,
    { retryable: true },
  );
}

/**
 * One call's Deepgram stream. Each utterance sends its audio as it arrives, then `Finalize`;
 * interim results become partials, and the final is every final result of the utterance up
 * to the one marked `from_finalize`.
 *
 * Results carry no utterance id, so utterances use the stream one after the other: the next
 * one's audio waits (queued in its iterable) until the last one has its final. An utterance
 * that ends any other way (abort, failure, timeout) after sending audio leaves results on the
 * way, so its stream is closed and the next utterance opens a new one; so does a stream the
 * server closed.
 */
export class DeepgramSession implements AsrSession {
  private connection: DeepgramConnection | undefined;
  /** Settles once the utterance before the newest one is done with the stream. */
  private turn: Promise<void> = Promise.resolve();
  private readonly utterances = new Set<Utterance>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly config: DeepgramSessionConfig,
    connection: DeepgramConnection,
  ) {
    this.connection = connection;
  }

  async *transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal): AsyncIterable<AsrResult> {
    if (this.closing) throw closedError();
    signal.throwIfAborted();
    const previous = this.turn;
    let endTurn!: () => void;
    this.turn = new Promise((resolve) => (endTurn = resolve));
    const utterance = new Utterance(signal, this.config.finalTimeoutMs);
    this.utterances.add(utterance);
    let connection: DeepgramConnection | undefined;
    const finish = () => {
      utterance.detach();
      this.utterances.delete(utterance);
      if (connection && utterance.sentAudio && !utterance.completed && connection === this.connection) {
        this.connection = undefined;
        void connection.close();
      }
      endTurn();
    };
    try {
      const ready = await utterance.until(previous.then(() => this.liveConnection(signal)));
      if (ready) {
        connection = ready.value;
        utterance.attach(connection);
        void this.stream(audio, connection, utterance);
      }
      for (;;) {
        const result = await utterance.next();
        if (result.type === "final") {
          // The stream is free for the next utterance now, not when the consumer asks for more.
          finish();
          yield result;
          return;
        }
        yield result;
      }
    } finally {
      finish();
    }
  }

  /** Ends the utterances under way (they reject with `closed`), sends `CloseStream` and closes the socket. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      for (const utterance of this.utterances) utterance.fail(closedError());
      this.closing = this.connection?.close() ?? Promise.resolve();
      this.connection = undefined;
    }
    return this.closing;
  }

  /** The open stream, or a new one in place of one that closed. */
  private async liveConnection(signal: AbortSignal): Promise<DeepgramConnection> {
    if (this.closing) throw closedError();
    if (this.connection?.isOpen) return this.connection;
    this.connection = undefined;
    const connection = await this.config.connect(signal);
    if (this.closing) {
      void connection.close();
      throw closedError();
    }
    this.connection = connection;
    return connection;
  }

  /** Sends the utterance's audio as it comes, then `Finalize`; stops reading the audio once the utterance is over. */
  private async stream(audio: AsyncIterable<AudioFrame>, connection: DeepgramConnection, utterance: Utterance): Promise<void> {
    const frames = audio[Symbol.asyncIterator]();
    let exhausted = false;
    try {
      for (;;) {
        const next = await utterance.until(frames.next());
        if (!next) return;
        if (next.value.done) break;
        const frame = next.value.value;
        if (frame.sampleRate !== this.config.sampleRate) {
          throw new AsrError(
            "unsupported_audio",
            `the Deepgram stream was opened for ${this.config.sampleRate} Hz audio, not ${frame.sampleRate} Hz`,
            { retryable: false },
          );
        }
        if (frame.samples.length === 0) continue;
        // A closed socket has failed the utterance (or is about to, with its close event).
        if (!connection.sendAudio(frame.samples)) return;
        utterance.sentAudio = true;
      }
      exhausted = true;
      utterance.audioEnded(connection);
    } catch (error) {
      utterance.fail(error);
    } finally {
      // Tells the producer nobody reads any more (the pending read, if any, is dropped).
      if (!exhausted) void frames.return?.()?.catch(() => undefined);
    }
  }
}

/**
 * One utterance: its results as a queue the generator awaits, fed by the stream's messages and
 * ended by its final, an abort, the stream's close, a timeout or the session's close.
 */
class Utterance {
  /** Some audio went out: the stream holds results of this utterance until its final. */
  sentAudio = false;
  private done = false;
  private failure: { error: unknown } | undefined;
  private finalizing = false;
  private finalTimer: NodeJS.Timeout | undefined;
  /** Transcripts of the final results so far, in order. */
  private readonly finals: string[] = [];
  private interim = "";
  private lastPartial = "";
  private readonly results: AsrResult[] = [];
  private wake: (() => void) | undefined;
  private connection: DeepgramConnection | undefined;
  private resolveEnded!: (ended: undefined) => void;
  /** Resolves when the utterance is over, for any reason. */
  private readonly ended = new Promise<undefined>((resolve) => (this.resolveEnded = resolve));
  private readonly onAbort = () => this.fail(this.signal.reason);
  private readonly onMessage = (event: DeepgramServerEvent) => this.receive(event);
  private readonly onClose = (close: DeepgramClose) => this.fail(crashedError(close));

  constructor(
    private readonly signal: AbortSignal,
    private readonly finalTimeoutMs: number,
  ) {
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /** The final was received. */
  get completed(): boolean {
    return this.done;
  }

  get over(): boolean {
    return this.done || this.failure !== undefined;
  }

  /** `promise`'s value, or undefined as soon as the utterance is over. */
  until<T>(promise: Promise<T>): Promise<{ value: T } | undefined> {
    return Promise.race([promise.then((value) => ({ value })), this.ended]);
  }

  attach(connection: DeepgramConnection): void {
    this.connection = connection;
    connection.on("message", this.onMessage).on("close", this.onClose);
    // Closed since it was handed over: its close event has been and gone.
    if (connection.closed) this.onClose(connection.closed);
  }

  detach(): void {
    this.signal.removeEventListener("abort", this.onAbort);
    this.connection?.off("message", this.onMessage).off("close", this.onClose);
    clearTimeout(this.finalTimer);
  }

  /** The audio is all sent: asks for the final, which must come within the timeout. */
  audioEnded(connection: DeepgramConnection): void {
    if (this.over) return;
    // Nothing to recognize, and the server may not answer a Finalize that flushes nothing.
    if (!this.sentAudio) return this.complete("");
    this.finalizing = true;
    connection.sendControl("Finalize");
    this.finalTimer = setTimeout(() => {
      const message = `the Deepgram service sent no final within ${this.finalTimeoutMs} ms of the end of the utterance`;
      this.fail(new AsrError("recognition_failed", message, { retryable: true }));
    }, this.finalTimeoutMs);
  }

  /** Ends the utterance with `error` unless it is over already (the first end wins). */
  fail(error: unknown): void {
    if (this.over) return;
    this.failure = { error };
    this.end();
  }

  async next(): Promise<AsrResult> {
    for (;;) {
      if (this.failure) throw this.failure.error;
      const result = this.results.shift();
      if (result) return result;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private receive(event: DeepgramServerEvent): void {
    if (this.over) return;
    if (event.type === "error") {
      this.fail(new AsrError("recognizer_crashed", `the Deepgram service reported an error: ${event.message}`, { retryable: true }));
      return;
    }
    if (event.type !== "results") return;
    if (event.isFinal || event.fromFinalize) {
      if (event.transcript) this.finals.push(event.transcript);
      this.interim = "";
    } else {
      this.interim = event.transcript;
    }
    // Only the answer to this utterance's Finalize ends it: the server may finalize stretches of audio on its own.
    if (event.fromFinalize && this.finalizing) return this.complete(this.finals.join(" "));
    const text = [...this.finals, this.interim].filter((part) => part !== "").join(" ");
    if (text !== "" && text !== this.lastPartial) {
      this.lastPartial = text;
      this.push({ type: "partial", text });
    }
  }

  private complete(text: string): void {
    this.done = true;
    this.push({ type: "final", text });
    this.end();
  }

  private push(result: AsrResult): void {
    this.results.push(result);
    this.wake?.();
  }

  private end(): void {
    clearTimeout(this.finalTimer);
    this.resolveEnded(undefined);
    this.wake?.();
  }
}
