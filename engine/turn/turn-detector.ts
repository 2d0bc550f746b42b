import { BargeInPolicy } from "./barge-in-policy.js";
import { SpeechDetector } from "./speech-detector.js";
import type { TurnCompleteness } from "./turn-completeness.js";

/** One caller frame as the turn logic sees it: its VAD probability and level, on the caller's audio timeline. */
export interface TurnFrame {
  /** The VAD's speech probability, 0..1. */
  probability: number;
  /** RMS level of the frame (PCM16 units). */
  level: number;
  /** Where the frame ends: ms of caller audio since the call started. */
  endMs: number;
  frameMs: number;
}

/**
 * What the turn logic decided on a frame or on the words so far. `atMs` is on the caller's
 * audio timeline.
 * - `turn_start`: the caller began a turn (recognize from here, pre-roll included).
 * - `resume`: the caller speaks again after a `pause` of the same turn (recognize this part too).
 * - `pause`: the caller paused; finish recognizing now and give the turn's words so far to
 *   `judge` with this pause's `pause` number.
 * - `turn_end`: the caller's turn is over (`atMs`: the end of their last voiced frame).
 */
export type TurnSignal =
  | { type: "turn_start"; atMs: number }
  | { type: "resume"; atMs: number }
  | { type: "pause"; atMs: number; pause: number }
  | { type: "turn_end"; atMs: number };

/**
 * Decides when the caller's turn starts and ends, and when caller speech interrupts the agent.
 * One per call, given to the CallSession; synchronous and clock-free (it reads the audio
 * timeline only), so a strategy is tested on recorded VAD and transcript timelines.
 */
export interface TurnDetector {
  /** One caller frame, in order; a decision or null. */
  push(frame: TurnFrame): TurnSignal | null;
  /**
   * The turn's words up to pause number `pause`, judged by the dialogue, with the caller's audio
   * timeline at `atMs` now. A `turn_end` when that ends the turn now; null when it waits (or the
   * caller has spoken again since that pause).
   */
  judge(pause: number, completeness: TurnCompleteness, atMs: number): TurnSignal | null;
  /** End of the last voiced frame on the audio timeline. */
  readonly lastSpeechEndMs: number;
  /** Whether caller speech over the agent, recognized so far as `partialText`, interrupts it now. */
  interrupts(partialText: string): boolean;
  /** Whether the words of a turn the caller finished over the agent interrupt it (not a backchannel). */
  interruptsAfterFinal(finalText: string): boolean;
}

/**
 * What the strategies share: a SpeechDetector that ends speech after `speechEndMs` of silence
 * (the end of a turn, or a pause in one), and the barge-in rules of `interruption_threshold`.
 */
export abstract class SpeechTurnDetector implements TurnDetector {
  protected readonly speech: SpeechDetector;
  private readonly policy: BargeInPolicy;

  constructor(speechEndMs: number, interruptionThreshold: number) {
    this.speech = new SpeechDetector({ endpointingMs: speechEndMs });
    this.policy = new BargeInPolicy({ interruptionThreshold });
  }

  abstract push(frame: TurnFrame): TurnSignal | null;

  abstract judge(pause: number, completeness: TurnCompleteness, atMs: number): TurnSignal | null;

  get lastSpeechEndMs(): number {
    return this.speech.lastSpeechEndMs;
  }

  interrupts(partialText: string): boolean {
    return this.policy.shouldInterrupt(this.speech.currentSpeechMs(), partialText);
  }

  interruptsAfterFinal(finalText: string): boolean {
    return this.policy.interruptsAfterFinal(finalText);
  }
}
