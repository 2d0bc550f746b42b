import { SpeechTurnDetector, type TurnFrame, type TurnSignal } from "./turn-detector.js";

/**
 * `endpointing_mode: fixed`: the caller's turn ends after `endpointingMs` of silence, whatever
 * was said. Never pauses, so the words are recognized once, at the end of the turn.
 */
export class FixedTurnDetector extends SpeechTurnDetector {
  constructor(options: { endpointingMs: number; interruptionThreshold: number }) {
    super(options.endpointingMs, options.interruptionThreshold);
  }

  push(frame: TurnFrame): TurnSignal | null {
    const transition = this.speech.push(frame.probability, frame.endMs, frame.frameMs, frame.level);
    if (!transition) return null;
    return transition.type === "speech_start" ? { type: "turn_start", atMs: transition.atMs } : { type: "turn_end", atMs: transition.atMs };
  }

  judge(): TurnSignal | null {
    return null;
  }
}
