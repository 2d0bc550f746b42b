import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { apiKey, modelName, requestTimeoutMs, serviceUrl } from "../../provider-settings-schema.js";
import { OpenAiTranscriptionsProvider } from "./openai-transcriptions-provider.js";

export { OpenAiTranscriptionsProvider, type OpenAiTranscriptionsConfig } from "./openai-transcriptions-provider.js";
export { OpenAiTranscriptionError } from "./openai-transcription-error.js";

/** Recognition through an OpenAI-compatible `/v1/audio/transcriptions` (OpenAI, whisper.cpp, speaches). */
export const openAiTranscriptionsDefinition = defineProvider({
  name: "openai",
  stage: "asr",
  description: "OpenAI-compatible /v1/audio/transcriptions (OpenAI, whisper.cpp server, speaches): one request per utterance, key as Authorization: Bearer",
  remote: true,
  settings: z.object({
    url: serviceUrl("https://api.openai.com"),
    apiKey: apiKey(),
    model: modelName("whisper-1", "the transcription model (whisper-1, gpt-4o-transcribe, or the local server's model name)"),
    requestTimeoutMs: requestTimeoutMs(),
    maxSeconds: z.coerce.number().int().min(1).max(600).default(30).describe("an utterance longer than this sends only its last this many seconds"),
  }),
  create: (settings, { retry }) => new OpenAiTranscriptionsProvider({ ...settings, retry }),
});
