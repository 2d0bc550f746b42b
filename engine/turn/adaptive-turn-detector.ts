import type { TurnCompleteness } from "./turn-completeness.js";
import { SpeechTurnDetector, type TurnFrame, type TurnSignal } from "./turn-detector.js";

/** Silence after which the words so far are judged (and a reply to them may be prepared). */
export const PAUSE_MS = 200;
/**
 * Silence that ends a turn whose words are complete: about when a person answers a finished
 * question, and longer than the short pauses inside a sentence the caller goes on with, which
 * the pause alone would cut into. The reply is prepared meanwhile (see CallSession), so the
 * wait costs the caller little. A speaker who pauses longer than this between complete
 * sentences is answered in the pause (and can talk over the answer).
 */
export const COMPLETE_WAIT_MS = 300;
/** How long a turn whose words the dialogue cannot judge waits after the caller's last word. */
export const UNKNOWN_WAIT_MS = 600;

export interface AdaptiveTurnOptions {
  /** The longest wait: silence that ends any turn (the agent's `endpointing_ms`). */
  maxWaitMs: number;
  interruptionThreshold: number;
}

/**
 * `endpointing_mode: adaptive`: after a short pause (PAUSE_MS) the turn's words so far are
 * judged. A complete turn ends COMPLETE_WAIT_MS after the last word (at once if the judgement
 * came later); an incomplete one ("on", "and", "um" at its end) waits up to `maxWaitMs`, an
 * unknown one UNKNOWN_WAIT_MS. Speech before then
 * resumes the same turn, and the next pause is judged on all its words. Until the words of a
 * pause are judged, the turn waits as for an incomplete one: a slow recognizer makes the turn
 * end late, never early.
 */
export class AdaptiveTurnDetector extends SpeechTurnDetector {
  private readonly maxWaitMs: number;
  private readonly unknownWaitMs: number;
  private readonly completeWaitMs: number;
  private turn = false;
  private pauses = 0;
  /** The pause the caller is in: its number, and the silence that ends the turn once its words are judged. */
  private paused: { pause: number; waitMs: number } | undefined;

  /** Every wait is at most `maxWaitMs` (the agent's `endpointing_ms`), however short. */
  constructor(options: AdaptiveTurnOptions) {
    const { maxWaitMs } = options;
    super(Math.min(PAUSE_MS, maxWaitMs), options.interruptionThreshold);
    this.maxWaitMs = maxWaitMs;
    this.unknownWaitMs = Math.min(UNKNOWN_WAIT_MS, maxWaitMs);
    this.completeWaitMs = Math.min(COMPLETE_WAIT_MS, maxWaitMs);
  }

  push(frame: TurnFrame): TurnSignal | null {
    const transition = this.speech.push(frame.probability, frame.endMs, frame.frameMs, frame.level);
    if (transition?.type === "speech_start") {
      this.paused = undefined;
      if (this.turn) return { type: "resume", atMs: transition.atMs };
      this.turn = true;
      return { type: "turn_start", atMs: transition.atMs };
    }
    if (transition?.type === "speech_end") {
      // An endpointing_ms no longer than the pause: the turn ends here, as a fixed one would.
      if (frame.endMs - transition.atMs >= this.maxWaitMs) return this.end();
      this.paused = { pause: ++this.pauses, waitMs: this.maxWaitMs };
      return { type: "pause", atMs: transition.atMs, pause: this.pauses };
    }
    // Not while voiced frames may be the caller going on.
    if (this.paused && !this.speech.startingSpeech && frame.endMs - this.speech.lastSpeechEndMs >= this.paused.waitMs) return this.end();
    return null;
  }

  judge(pause: number, completeness: TurnCompleteness, atMs: number): TurnSignal | null {
    if (this.paused?.pause !== pause) return null;
    this.paused.waitMs = completeness === "complete" ? this.completeWaitMs : completeness === "unknown" ? this.unknownWaitMs : this.maxWaitMs;
    return atMs - this.speech.lastSpeechEndMs >= this.paused.waitMs ? this.end() : null;
  }

  private end(): TurnSignal {
    this.turn = false;
    this.paused = undefined;
    return { type: "turn_end", atMs: this.speech.lastSpeechEndMs };
  }
}
