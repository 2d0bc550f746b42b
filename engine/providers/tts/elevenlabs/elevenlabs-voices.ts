import type { VoiceInfo } from "../voice.js";

/** Voice ids are this prefix + the configured name, e.g. `elevenlabs-rachel`. */
export const ELEVENLABS_VOICE_PREFIX = "elevenlabs-";

/** A few of ElevenLabs' premade voices, offered when no list is configured (`name=voice_id`, comma-separated). */
export const DEFAULT_ELEVENLABS_VOICES = "rachel=21m00Tcm4TlvDq8EAc40,adam=pNInz6obpgDQGcFmaJgB,sarah=EXAVITQu4vr4xnSDxMaL,george=JBFqnCBsd6RMkjVDRZzb";

/** How the default voices sound; a configured voice of another id is not guessed at ("neutral", en-US). */
const KNOWN_VOICES: ReadonlyMap<string, Pick<VoiceInfo, "gender" | "language">> = new Map([
  ["21m00Tcm4TlvDq8EAc40", { gender: "female", language: "en-US" }],
  ["pNInz6obpgDQGcFmaJgB", { gender: "male", language: "en-US" }],
  ["EXAVITQu4vr4xnSDxMaL", { gender: "female", language: "en-US" }],
  ["JBFqnCBsd6RMkjVDRZzb", { gender: "male", language: "en-GB" }],
]);

/** One configured voice: the name Parley offers it under, and ElevenLabs' id for it. */
export interface ElevenLabsVoice {
  readonly name: string;
  readonly voiceId: string;
}

/**
 * Reads the `voices` setting: `name=voice_id` pairs separated by commas. Names become part of
 * Parley's voice ids; voice ids go into the request's path, so both are kept to plain
 * characters (nothing that could change the path, such as `/`, `?` or `..`).
 */
export function parseElevenLabsVoices(setting: string): readonly ElevenLabsVoice[] {
  const voices: ElevenLabsVoice[] = [];
  for (const entry of setting.split(",")) {
    const pair = entry.trim();
    if (!pair) continue;
    const match = /^([A-Za-z0-9_-]{1,64})\s*=\s*([A-Za-z0-9]{1,64})$/.exec(pair);
    if (!match) throw new Error(`ElevenLabs voices are name=voice_id pairs of letters and digits (names may have - and _), not ${JSON.stringify(pair)}`);
    voices.push(Object.freeze({ name: match[1]!, voiceId: match[2]! }));
  }
  if (voices.length === 0) throw new Error("ElevenLabs needs at least one voice (name=voice_id)");
  if (new Set(voices.map((v) => v.name)).size !== voices.length) throw new Error("ElevenLabs voice names must be unique");
  return Object.freeze(voices);
}

/** The configured voices as `GET /v1/voices` lists them. */
export function elevenLabsVoices(voices: readonly ElevenLabsVoice[], sampleRate: number): readonly VoiceInfo[] {
  return Object.freeze(
    voices.map(({ name, voiceId }) =>
      Object.freeze({
        id: `${ELEVENLABS_VOICE_PREFIX}${name}`,
        provider: "elevenlabs",
        name,
        language: KNOWN_VOICES.get(voiceId)?.language ?? "en-US",
        gender: KNOWN_VOICES.get(voiceId)?.gender ?? "neutral",
        sample_rate: sampleRate,
      }),
    ),
  );
}
