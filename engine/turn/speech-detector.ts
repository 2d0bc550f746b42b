/**
 * Turns per-frame speech probabilities into speech start and end, with hysteresis: speech
 * starts after `startMs` of frames above `startThreshold`, and ends after `endpointingMs` of
 * frames below `endThreshold` (the agent's `endpointing_ms`). Time is the caller's audio
 * timeline (ms since call start), so results depend on the audio only, never on wall clocks.
 */
export interface SpeechDetectorOptions {
  startThreshold?: number;
  endThreshold?: number;
  /** Speech needed before a start is declared (filters clicks). */
  startMs?: number;
  /** Silence that ends the caller's turn. */
  endpointingMs: number;
}

export type SpeechTransition =
  | { type: "speech_start"; atMs: number }
  | { type: "speech_end"; atMs: number; speechMs: number };

export class SpeechDetector {
  private readonly startThreshold: number;
  private readonly endThreshold: number;
  private readonly startMs: number;
  private readonly endpointingMs: number;
  private speaking = false;
  private voicedRunMs = 0;
  private silentRunMs = 0;
  private speechStartMs = 0;
  /** End of the last voiced frame: where the caller stopped speaking. */
  private lastVoicedEndMs = 0;

  constructor(options: SpeechDetectorOptions) {
    this.startThreshold = options.startThreshold ?? 0.5;
    this.endThreshold = options.endThreshold ?? 0.35;
    this.startMs = options.startMs ?? 60;
    this.endpointingMs = options.endpointingMs;
  }

  get isSpeaking(): boolean {
    return this.speaking;
  }

  /**
   * Milliseconds of the current utterance up to its last voiced frame (0 when not speaking):
   * the silence that may end the turn does not count as speech.
   */
  currentSpeechMs(): number {
    return this.speaking ? this.lastVoicedEndMs - this.speechStartMs : 0;
  }

  /** Feeds one frame that ends at `endMs` and lasted `frameMs`; returns a transition or null. */
  push(probability: number, endMs: number, frameMs: number): SpeechTransition | null {
    if (!this.speaking) {
      if (probability >= this.startThreshold) {
        this.voicedRunMs += frameMs;
        if (this.voicedRunMs >= this.startMs) {
          this.speaking = true;
          this.silentRunMs = 0;
          this.speechStartMs = endMs - this.voicedRunMs;
          this.lastVoicedEndMs = endMs;
          return { type: "speech_start", atMs: this.speechStartMs };
        }
      } else {
        this.voicedRunMs = 0;
      }
      return null;
    }
    if (probability < this.endThreshold) {
      this.silentRunMs += frameMs;
      if (this.silentRunMs >= this.endpointingMs) {
        this.speaking = false;
        this.voicedRunMs = 0;
        this.silentRunMs = 0;
        return { type: "speech_end", atMs: this.lastVoicedEndMs, speechMs: this.lastVoicedEndMs - this.speechStartMs };
      }
    } else {
      this.silentRunMs = 0;
      this.lastVoicedEndMs = endMs;
    }
    return null;
  }

  reset(): void {
    this.speaking = false;
    this.voicedRunMs = 0;
    this.silentRunMs = 0;
  }
}
