/** A voice a TTS provider offers, as `GET /v1/voices` lists it. */
export interface VoiceInfo {
  /** Globally unique: provider prefix + the provider's own voice name, e.g. `flite-rms`. */
  id: string;
  provider: string;
  name: string;
  /** BCP 47 tag, e.g. `en-US`. */
  language: string;
  gender: "male" | "female" | "neutral";
  /** Native output rate of the voice, Hz. */
  sample_rate: number;
}
