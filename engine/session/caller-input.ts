import { FRAME_MS, durationMs, type AudioFrame } from "../audio/audio-frame.js";
import { CallerInputBudget, MAX_QUEUED_INPUT_MS } from "../audio/caller-input-budget.js";
import type { Clock } from "../audio/clock.js";
import { rms } from "../audio/pcm16.js";
import type { CallEvent } from "../call-events.js";
import type { TurnDetector, TurnSignal } from "../turn/turn-detector.js";
import type { Vad } from "../vad/vad.js";

/** Pre-roll kept at most, whatever the call asks for. */
const MAX_PREROLL_MS = 300;

/** One caller frame with what was made of it, in the order the frames came. */
export interface CallerFrame {
  frame: AudioFrame;
  /** The turn detector's signal at this frame (null: nothing changed). */
  signal: TurnSignal | null;
  /** Where the frame ends on the input timeline (caller audio so far, in ms). */
  endMs: number;
}

/** What caller input needs of the call it belongs to. */
export interface CallerInputHost {
  /** The call is ending: audio is ignored. */
  isEnding(): boolean;
  /** The caller sends audio faster than real time past the allowance: the call ends (`audio_overrun`). */
  overrun(): void;
  /** The recovered `error` that frames are being dropped (once per episode). */
  report(event: Extract<CallEvent, { type: "error" }>): void;
  /** The frame goes into the recording at `atMs` on the input timeline. */
  record(frame: AudioFrame, atMs: number): void;
  /**
   * A frame, judged: true when an open part of the caller's turn took it; else it goes into the
   * pre-roll (see `takePreRoll`).
   */
  heard(frame: CallerFrame): boolean;
  /** Handling a frame failed (a VAD error, a bug): the call cannot listen any more. */
  failed(err: unknown): void;
}

/**
 * The caller's audio on its way in: kept within real time (CallerInputBudget: a flood ends the
 * call, a VAD that has fallen behind has frames dropped), each frame's speech probability from
 * the VAD and the turn detector's signal handed to the session in order, the input timeline,
 * and the pre-roll (the audio just before speech is detected, so the recognizer hears the
 * first word whole).
 */
export class CallerInput {
  private readonly budget = new CallerInputBudget();
  private readonly preRoll: AudioFrame[] = [];
  private readonly preRollFrames: number;
  private vad: Vad | undefined;
  private startedAt = 0;
  /** Caller audio received so far, in ms: the input timeline. */
  private receivedMs = 0;
  /** The handling of the VAD's answers, frame after frame. */
  private chain: Promise<void> = Promise.resolve();
  /** Frames are being dropped because the VAD is behind (reported once per episode). */
  private dropping = false;

  constructor(
    private readonly clock: Clock,
    private readonly turnDetector: TurnDetector,
    private readonly host: CallerInputHost,
    preRollMs = MAX_PREROLL_MS,
  ) {
    this.preRollFrames = Math.ceil(Math.min(preRollMs, MAX_PREROLL_MS) / FRAME_MS);
  }

  /** Caller audio so far, in ms: where the input timeline stands. */
  get inputMs(): number {
    return this.receivedMs;
  }

  /** Frames are judged by `vad` from now; the call started at `startedAt` (its real-time budget counts from there). */
  open(vad: Vad, startedAt: number): void {
    this.vad = vad;
    this.startedAt = startedAt;
  }

  /** A frame of caller audio as it arrives. */
  push(frame: AudioFrame): void {
    if (this.host.isEnding()) return;
    const frameMs = durationMs(frame);
    const verdict = this.budget.admit(frameMs, this.clock.now() - this.startedAt);
    if (verdict === "overrun") return this.host.overrun();
    if (verdict === "drop") return this.drop();
    this.dropping = false;
    // The VAD gets each frame as it arrives (it keeps them in order); only the handling of
    // its answers is chained. Waiting for one answer before sending the next frame would
    // cost a round trip per frame, and after a busy moment the caller's audio would drain
    // that slowly and stay seconds behind.
    const probability = this.host.isEnding() || !this.vad ? null : this.vad.process(frame);
    probability?.catch(() => undefined);
    this.chain = this.chain
      .then(() => {
        this.budget.dequeued(frameMs);
        return this.judge(frame, frameMs, probability);
      })
      .catch((err: unknown) => this.host.failed(err));
  }

  /** The frames kept from before the part of the caller's turn that opens now, taken out. */
  takePreRoll(): AudioFrame[] {
    return this.preRoll.splice(0);
  }

  /** Resolves once every frame received has been handled. */
  drained(): Promise<void> {
    return this.chain.catch(() => undefined);
  }

  /** Releases the VAD. */
  close(): Promise<void> | undefined {
    return this.vad?.close();
  }

  /** The VAD is MAX_QUEUED_INPUT_MS behind (overload): the frame is lost, as a lost packet is. */
  private drop(): void {
    if (this.dropping) return;
    this.dropping = true;
    this.host.report({ type: "error", message: `caller audio dropped: the voice activity detector is more than ${MAX_QUEUED_INPUT_MS} ms behind`, recovered: true });
  }

  private async judge(frame: AudioFrame, frameMs: number, vadAnswer: Promise<number> | null): Promise<void> {
    if (this.host.isEnding() || !vadAnswer) return;
    const startMs = this.receivedMs;
    this.receivedMs += frameMs;
    this.host.record(frame, startMs);
    const probability = await vadAnswer;
    const signal = this.turnDetector.push({ probability, level: rms(frame.samples), endMs: this.receivedMs, frameMs });
    if (this.host.heard({ frame, signal, endMs: this.receivedMs })) return;
    this.preRoll.push(frame);
    if (this.preRoll.length > this.preRollFrames) this.preRoll.shift();
  }
}
