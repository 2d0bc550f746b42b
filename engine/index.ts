/**
 * The engine's public surface: the only module the control plane imports.
 */
export type { VoiceInfo } from "./providers/tts/voice.js";
export { FLITE_VOICES } from "./providers/tts/flite-voices.js";
