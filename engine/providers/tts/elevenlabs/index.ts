import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { apiKey, modelName, requestTimeoutMs, serviceUrl } from "../../provider-settings-schema.js";
import { ELEVENLABS_SAMPLE_RATES, ElevenLabsTts } from "./elevenlabs-tts.js";
import { DEFAULT_ELEVENLABS_VOICES } from "./elevenlabs-voices.js";

export { ElevenLabsError } from "./elevenlabs-error.js";
export { ElevenLabsTts, type ElevenLabsTtsConfig } from "./elevenlabs-tts.js";

/** ElevenLabs' streaming text to speech, for the provider registry. */
export const elevenLabsDefinition = defineProvider({
  name: "elevenlabs",
  stage: "tts",
  description: "ElevenLabs streaming text to speech (POST /v1/text-to-speech/{voice_id}/stream, PCM), key as xi-api-key",
  remote: true,
  settings: z.object({
    url: serviceUrl("https://api.elevenlabs.io"),
    apiKey: apiKey(),
    model: modelName("eleven_flash_v2_5", "the model_id"),
    voices: z.string().default(DEFAULT_ELEVENLABS_VOICES).describe("voices offered as elevenlabs-<name>: comma-separated name=voice_id pairs"),
    // Coerced: a value from the environment arrives as text.
    sampleRate: z.coerce
      .number()
      .int()
      .refine((rate) => (ELEVENLABS_SAMPLE_RATES as readonly number[]).includes(rate), { message: `one of ${ELEVENLABS_SAMPLE_RATES.join(", ")}` })
      .default(16_000)
      .describe("rate of the PCM asked for: 16000, 22050 or 24000 Hz"),
    requestTimeoutMs: requestTimeoutMs(),
  }),
  create: (settings, { retry }) => new ElevenLabsTts({ ...settings, retry }),
});
