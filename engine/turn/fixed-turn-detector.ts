import { BargeInPolicy } from "./barge-in-policy.js";
import { SpeechDetector } from "./speech-detector.js";
import type { TurnDetector, TurnFrame, TurnSignal } from "./turn-detector.js";

/**
 * `endpointing_mode: fixed`: the caller's turn ends after `endpointingMs` of silence, whatever
 * was said. Never pauses, so the words are recognized once, at the end of the turn.
 */
export class FixedTurnDetector implements TurnDetector {
  private readonly speech: SpeechDetector;
  private readonly policy: BargeInPolicy;

  constructor(options: { endpointingMs: number; interruptionThreshold: number }) {
    this.speech = new SpeechDetector({ endpointingMs: options.endpointingMs });
    this.policy = new BargeInPolicy({ interruptionThreshold: options.interruptionThreshold });
  }

  get inTurn(): boolean {
    return this.speech.isSpeaking;
  }

  get lastSpeechEndMs(): number {
    return this.speech.lastSpeechEndMs;
  }

  push(frame: TurnFrame): TurnSignal | null {
    const transition = this.speech.push(frame.probability, frame.endMs, frame.frameMs, frame.level);
    if (!transition) return null;
    return transition.type === "speech_start" ? { type: "turn_start", atMs: transition.atMs } : { type: "turn_end", atMs: transition.atMs };
  }

  judge(): TurnSignal | null {
    return null;
  }

  interrupts(partialText: string): boolean {
    return this.policy.shouldInterrupt(this.speech.currentSpeechMs(), partialText);
  }

  interruptsAfterFinal(finalText: string): boolean {
    return this.policy.interruptsAfterFinal(finalText);
  }
}
