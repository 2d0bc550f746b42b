import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { apiKey, modelName, requestTimeoutMs, serviceUrl } from "../../provider-settings-schema.js";
import { OpenAiSpeechTts } from "./openai-speech-tts.js";

export const openAiSpeechDefinition = defineProvider({
  name: "openai",
  stage: "tts",
  description: "OpenAI-compatible /v1/audio/speech (OpenAI, Kokoro-FastAPI, Piper servers): voices offered as openai-<voice>; key as Authorization: Bearer",
  remote: true,
  settings: z.object({
    url: serviceUrl("https://api.openai.com"),
    apiKey: apiKey(),
    model: modelName("tts-1"),
    voices: z.string().default("").describe("the server's voice names, comma-separated (empty: OpenAI's built-in voices)"),
    requestTimeoutMs: requestTimeoutMs(),
  }),
  create: ({ voices, ...settings }, { retry }) =>
    new OpenAiSpeechTts({ ...settings, apiKey: settings.apiKey || undefined, ...(voices ? { voices: voices.split(",").map((v) => v.trim()) } : {}), retry }),
});
