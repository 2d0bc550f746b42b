import type { AudioFrame } from "../../audio/audio-frame.js";
import type { VoiceInfo } from "./voice.js";

/** Audio of the text given to `synthesize`. */
export interface SpeechChunk extends AudioFrame {
  /**
   * Which text piece (0-based, in the order given) this audio says: a reply cut short is cut at
   * the right sentence. Absent: the newest piece given so far.
   */
  piece?: number;
}

/**
 * Text to speech. `synthesize` takes text pieces (the call session sends whole sentences as
 * soon as each is complete) and yields audio chunks of any length at the voice's native rate,
 * in the order of the pieces, the first as soon as possible. Aborting the signal stops
 * synthesis at once.
 */
export interface TtsProvider {
  readonly name: string;
  voices(): readonly VoiceInfo[];
  synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk>;
  /** Releases the processes or workers it holds (the engine calls it when it closes). */
  close?(): Promise<void>;
}
