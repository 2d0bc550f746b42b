import type { AudioFrame } from "../../audio/audio-frame.js";
import type { VoiceInfo } from "./voice.js";

/**
 * Text to speech. `synthesize` takes text pieces (the call session sends whole sentences as
 * soon as each is complete) and yields audio chunks of any length at the voice's native rate,
 * the first as soon as possible. Aborting the signal stops synthesis at once.
 */
export interface TtsProvider {
  readonly name: string;
  voices(): readonly VoiceInfo[];
  synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<AudioFrame>;
}
