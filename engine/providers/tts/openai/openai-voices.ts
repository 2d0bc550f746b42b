import type { VoiceInfo } from "../voice.js";

/** Voice ids are this prefix + the server's own voice name, e.g. `openai-nova`. */
export const OPENAI_VOICE_PREFIX = "openai-";

/** OpenAI's built-in speech voices: offered when no voice list is configured. */
export const OPENAI_VOICE_NAMES = ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"] as const;

/**
 * How OpenAI's voices sound (OpenAI publishes no genders). Other servers' names (Kokoro's
 * `af_bella`, Piper's models) are not guessed at: they list as "neutral".
 */
const OPENAI_VOICE_GENDERS: ReadonlyMap<string, VoiceInfo["gender"]> = new Map([
  ["alloy", "neutral"],
  ["ash", "male"],
  ["ballad", "male"],
  ["coral", "female"],
  ["echo", "male"],
  ["fable", "male"],
  ["onyx", "male"],
  ["nova", "female"],
  ["sage", "female"],
  ["shimmer", "female"],
  ["verse", "male"],
]);

/** The voices an OpenAI-compatible server offers, as `GET /v1/voices` lists them. */
export function openAiVoices(names: readonly string[], sampleRate: number): readonly VoiceInfo[] {
  return Object.freeze(
    names.map((name) =>
      Object.freeze({
        id: `${OPENAI_VOICE_PREFIX}${name}`,
        provider: "openai",
        name,
        language: "en-US",
        gender: OPENAI_VOICE_GENDERS.get(name) ?? "neutral",
        sample_rate: sampleRate,
      }),
    ),
  );
}
