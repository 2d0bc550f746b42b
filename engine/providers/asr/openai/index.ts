import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { OpenAiTranscriptionsProvider } from "./openai-transcriptions-provider.js";

export { OpenAiTranscriptionsProvider, type OpenAiTranscriptionsConfig } from "./openai-transcriptions-provider.js";
export { OpenAiTranscriptionError } from "./openai-transcription-error.js";

/** Recognition through an OpenAI-compatible `/v1/audio/transcriptions` (OpenAI, whisper.cpp, speaches). */
export const openAiTranscriptionsDefinition = defineProvider({
  name: "openai",
  stage: "asr",
  description: "OpenAI-compatible /v1/audio/transcriptions (OpenAI, whisper.cpp server, speaches): one request per utterance",
  remote: true,
  settings: z.object({
    url: z.string().default("https://api.openai.com").describe("Base URL of the server; requests go to {url}/v1/audio/transcriptions"),
    apiKey: z.string().default("").describe("Sent as Authorization: Bearer; empty for a local server that needs none"),
    model: z.string().default("whisper-1").describe("Transcription model (whisper-1, gpt-4o-transcribe, or the local server's model name)"),
    requestTimeoutMs: z.number().int().min(1).default(10_000).describe("Time allowed for an utterance's answer to start (and between its bytes), in ms"),
    maxSeconds: z.number().min(1).max(600).default(30).describe("An utterance longer than this sends only its last this many seconds"),
  }),
  create: (settings, { retry }) => new OpenAiTranscriptionsProvider({ ...settings, retry }),
});
