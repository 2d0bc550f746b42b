import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { ELEVENLABS_SAMPLE_RATES, ElevenLabsTts } from "./elevenlabs-tts.js";
import { DEFAULT_ELEVENLABS_VOICES } from "./elevenlabs-voices.js";

export { ElevenLabsError } from "./elevenlabs-error.js";
export { ElevenLabsTts, type ElevenLabsTtsConfig } from "./elevenlabs-tts.js";

/** ElevenLabs' streaming text to speech, for the provider registry. */
export const elevenLabsDefinition = defineProvider({
  name: "elevenlabs",
  stage: "tts",
  description: "ElevenLabs streaming text to speech (POST /v1/text-to-speech/{voice_id}/stream, PCM)",
  remote: true,
  settings: z.object({
    url: z.string().default("https://api.elevenlabs.io").describe("ElevenLabs API base URL"),
    apiKey: z.string().default("").describe("ElevenLabs API key, sent as xi-api-key"),
    model: z.string().default("eleven_flash_v2_5").describe("ElevenLabs model id (model_id)"),
    voices: z.string().default(DEFAULT_ELEVENLABS_VOICES).describe("Voices offered as elevenlabs-<name>: comma-separated name=voice_id pairs"),
    // Coerced: a value from the environment arrives as text.
    sampleRate: z.coerce
      .number()
      .int()
      .refine((rate) => (ELEVENLABS_SAMPLE_RATES as readonly number[]).includes(rate), { message: `one of ${ELEVENLABS_SAMPLE_RATES.join(", ")}` })
      .default(16_000)
      .describe("Rate of the PCM asked for: 16000, 22050 or 24000 Hz"),
    requestTimeoutMs: z.coerce.number().int().min(1).default(10_000).describe("Time allowed for a sentence's first audio byte and between later ones, ms"),
  }),
  create: (settings, { retry }) => new ElevenLabsTts({ ...settings, retry }),
});
