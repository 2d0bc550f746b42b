import { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../audio/audio-frame.js";
import type { Clock } from "../audio/clock.js";
import { FrameClock } from "../audio/frame-clock.js";
import type { MediaTransport } from "../transports/transport.js";
import { heardText, type HeardText, type SpokenSentence } from "./heard-text.js";

/** An agent turn's audio as it is queued and played. */
export interface TurnAudio {
  sentences: SpokenSentence[];
  /** Frames queued for sending, and frames sent so far. */
  queuedFrames: number;
  playedFrames: number;
}

export interface AgentPlayoutEvents<T> {
  /** A frame of `turn` went to the caller; `atMs` is its slot on the schedule. */
  frame: (frame: AudioFrame, atMs: number, turn: T | undefined) => void;
  /** Everything queued has played (not emitted after `pause`, `stop`). */
  idle: (turn: T | undefined) => void;
}

/**
 * The agent's voice on its way to the caller: one turn's audio at a time, paced in real time,
 * paused and resumed where it stopped (a backchannel) or cut at once (an interruption), and
 * the account of what the caller heard of it. Frames of a turn that is no longer the one
 * playing are refused, so a cut reply's late audio is never heard.
 */
export class AgentPlayout<T extends TurnAudio> extends EventEmitter<AgentPlayoutEvents<T>> {
  private readonly frames: FrameClock;
  private current: T | undefined;

  constructor(private readonly transport: MediaTransport, clock: Clock) {
    super();
    this.frames = new FrameClock({ clock });
    this.frames.on("frame", (frame, atMs) => {
      const turn = this.current;
      this.transport.sendAudio(frame);
      if (turn) turn.playedFrames += 1;
      this.emit("frame", frame, atMs, turn);
    });
    this.frames.on("idle", () => this.emit("idle", this.current));
  }

  /** The turn being played (or paused, or still synthesizing); undefined when the agent is silent. */
  get turn(): T | undefined {
    return this.current;
  }

  /** Audio is going out now. */
  get playing(): boolean {
    return this.frames.playing;
  }

  /** Stopped by `pause()`, waiting for `resume()` or `stop()`. */
  get paused(): boolean {
    return this.frames.paused;
  }

  /** Audio queued and not yet sent, in ms. */
  get queuedMs(): number {
    return this.frames.queuedMs;
  }

  /** `turn` is played from now on (the previous one was stopped or has ended). */
  begin(turn: T): void {
    this.current = turn;
  }

  /** The turn has played in full: nothing is playing any more. */
  end(turn: T): void {
    if (this.current === turn) this.current = undefined;
  }

  /** The next sentence of `turn`; its audio follows with `enqueue(..., index)` (its place in `turn.sentences`). */
  addSentence(turn: T, text: string): void {
    turn.sentences.push({ text, frames: 0 });
  }

  /** Queues a frame of `turn`'s sentence `sentenceIndex`; false (dropped) when `turn` is not the one playing. */
  enqueue(turn: T, frame: AudioFrame, sentenceIndex: number): boolean {
    if (this.current !== turn) return false;
    const sentence = turn.sentences[sentenceIndex];
    if (sentence) sentence.frames += 1;
    turn.queuedFrames += 1;
    this.frames.enqueue(frame);
    return true;
  }

  /** Resolves once less than `leadMs` waits to be sent, `turn` is no longer playing, or `signal` aborts. */
  async room(turn: T, leadMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && this.current === turn && this.frames.queuedMs > leadMs) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.off("frame", done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.on("frame", done);
        signal.addEventListener("abort", done);
      });
    }
  }

  /**
   * Stops sending the agent's audio at once, keeping the rest to `resume()`. The far end is not
   * told to drop what it holds: audio goes out in real time, so it holds a frame or two, which
   * the caller hears rather than losing them from the middle of a word when the agent resumes.
   */
  pause(): void {
    if (!this.current) return;
    this.frames.pause();
  }

  /** Goes on from the frame where `pause()` stopped. */
  resume(): void {
    this.frames.resume();
  }

  /** Cuts the turn: its queued audio is dropped here and (unless the call is over) at the far end. */
  stop(options: { farEnd: boolean } = { farEnd: true }): void {
    this.current = undefined;
    this.frames.clear();
    if (options.farEnd) this.transport.clearAudio();
  }

  /** What the caller has heard of `turn` so far. */
  heard(turn: T): HeardText {
    return heardText(turn.sentences, turn.playedFrames);
  }
}
