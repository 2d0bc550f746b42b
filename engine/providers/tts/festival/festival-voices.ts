import type { VoiceInfo } from "../voice.js";

/** A Festival voice as Parley offers it, with the Scheme function that selects it. */
export interface FestivalVoice extends VoiceInfo {
  /** Festival's name for it: `(voice_<festivalName>)` selects it. */
  festivalName: string;
  /** The Debian package that installs it (named when it is missing). */
  package: string;
}

/**
 * The Festival voices Parley speaks with. Rates are what each voice writes in its RIFF header
 * (measured: the slt HTS voice renders at 32 kHz, the kal diphone voice at 16 kHz); the audio
 * carries the header's rate whatever this says.
 */
export const FESTIVAL_VOICES: readonly FestivalVoice[] = [
  { id: "festival-slt-hts", provider: "festival", name: "slt (HTS)", language: "en-US", gender: "female", sample_rate: 32000, festivalName: "cmu_us_slt_arctic_hts", package: "festvox-us-slt-hts" },
  { id: "festival-kal", provider: "festival", name: "kal (diphone)", language: "en-US", gender: "male", sample_rate: 16000, festivalName: "kal_diphone", package: "festvox-kallpc16k" },
];

/** Only VoiceInfo's fields (what `GET /v1/voices` lists). */
export function voiceInfo(voice: FestivalVoice): VoiceInfo {
  const { festivalName: _name, package: _package, ...info } = voice;
  return info;
}
