/**
 * Turns per-frame speech probabilities into speech start and end, with hysteresis: speech
 * starts after `startMs` of frames above `startThreshold`, and ends after `endpointingMs` of
 * frames below `endThreshold` (the agent's `endpointing_ms`). Time is the caller's audio
 * timeline (ms since call start), so results depend on the audio only, never on wall clocks.
 *
 * With frame levels (RMS) given, the end of speech is where the sound stopped, not where the
 * VAD's probability decayed: Silero stays above its threshold for two or three frames after
 * a word ends, so a voiced frame far quieter than the utterance's loudest (QUIET_TAIL_DB) does
 * not move the end. The turn ends `endpointingMs` after that end, once the VAD has also heard
 * MIN_VAD_SILENCE_MS of silence.
 */
export interface SpeechDetectorOptions {
  startThreshold?: number;
  endThreshold?: number;
  /** Speech needed before a start is declared (filters clicks). */
  startMs?: number;
  /** Silence that ends the caller's speech. */
  endpointingMs: number;
  /** However quiet the frames, the VAD must also have heard this much silence (default 200 ms, at most `endpointingMs`). */
  minVadSilenceMs?: number;
}

/** A voiced frame this far below the utterance's loudest is its fading tail, not speech. */
export const QUIET_TAIL_DB = 30;
const QUIET_TAIL_RATIO = 10 ** (-QUIET_TAIL_DB / 20);
/** However quiet, speech needs this much silence by the VAD as well to end. */
const MIN_VAD_SILENCE_MS = 200;

export type SpeechTransition =
  | { type: "speech_start"; atMs: number }
  | { type: "speech_end"; atMs: number; speechMs: number };

export class SpeechDetector {
  private readonly startThreshold: number;
  private readonly endThreshold: number;
  private readonly startMs: number;
  private readonly endpointingMs: number;
  private readonly minVadSilenceMs: number;
  private speaking = false;
  private voicedRunMs = 0;
  private silentRunMs = 0;
  private speechStartMs = 0;
  /** End of the last voiced frame: where the caller stopped speaking. */
  private lastVoicedEndMs = 0;
  /** Loudest frame level of the current utterance. */
  private peakLevel = 0;

  constructor(options: SpeechDetectorOptions) {
    this.startThreshold = options.startThreshold ?? 0.5;
    this.endThreshold = options.endThreshold ?? 0.35;
    this.startMs = options.startMs ?? 60;
    this.endpointingMs = options.endpointingMs;
    this.minVadSilenceMs = Math.min(options.minVadSilenceMs ?? MIN_VAD_SILENCE_MS, options.endpointingMs);
  }

  get isSpeaking(): boolean {
    return this.speaking;
  }

  /** Voiced frames have come since the last silence, not yet enough to declare speech. */
  get startingSpeech(): boolean {
    return !this.speaking && this.voicedRunMs > 0;
  }

  /** End of the last voiced frame on the audio timeline: where the caller last stopped speaking. */
  get lastSpeechEndMs(): number {
    return this.lastVoicedEndMs;
  }

  /**
   * Milliseconds of the current utterance up to its last voiced frame (0 when not speaking):
   * the silence that may end the turn does not count as speech.
   */
  currentSpeechMs(): number {
    return this.speaking ? this.lastVoicedEndMs - this.speechStartMs : 0;
  }

  /**
   * Feeds one frame that ends at `endMs` and lasted `frameMs`, with its RMS `level` when known;
   * returns a transition or null.
   */
  push(probability: number, endMs: number, frameMs: number, level?: number): SpeechTransition | null {
    if (!this.speaking) {
      if (probability >= this.startThreshold) {
        this.voicedRunMs += frameMs;
        this.peakLevel = Math.max(this.peakLevel, level ?? 0);
        if (this.voicedRunMs >= this.startMs) {
          this.speaking = true;
          this.silentRunMs = 0;
          this.speechStartMs = endMs - this.voicedRunMs;
          this.lastVoicedEndMs = endMs;
          return { type: "speech_start", atMs: this.speechStartMs };
        }
      } else {
        this.voicedRunMs = 0;
        this.peakLevel = 0;
      }
      return null;
    }
    if (probability < this.endThreshold) {
      this.silentRunMs += frameMs;
      if (endMs - this.lastVoicedEndMs >= this.endpointingMs && this.silentRunMs >= this.minVadSilenceMs) {
        this.speaking = false;
        this.voicedRunMs = 0;
        this.silentRunMs = 0;
        this.peakLevel = 0;
        return { type: "speech_end", atMs: this.lastVoicedEndMs, speechMs: this.lastVoicedEndMs - this.speechStartMs };
      }
    } else {
      this.silentRunMs = 0;
      this.peakLevel = Math.max(this.peakLevel, level ?? 0);
      if (level === undefined || level >= this.peakLevel * QUIET_TAIL_RATIO) this.lastVoicedEndMs = endMs;
    }
    return null;
  }

  reset(): void {
    this.speaking = false;
    this.voicedRunMs = 0;
    this.silentRunMs = 0;
    this.peakLevel = 0;
  }
}
