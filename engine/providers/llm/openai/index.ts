import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { apiKey, modelName, requestTimeoutMs, serviceUrl } from "../../provider-settings-schema.js";
import { OpenAiDialogueProvider } from "./openai-dialogue-provider.js";

export const openAiDialogueDefinition = defineProvider({
  name: "openai",
  stage: "dialogue",
  description: "OpenAI-compatible /v1/chat/completions, streamed, with tools: OpenAI, Ollama, vLLM, llama.cpp's server; key as Authorization: Bearer",
  remote: true,
  settings: z.object({
    url: serviceUrl("https://api.openai.com"),
    apiKey: apiKey(),
    modelLarge: modelName("gpt-4o", "the model for agents with model llm-large"),
    modelSmall: modelName("gpt-4o-mini", "the model for agents with model llm-small"),
    modelAlt: modelName("gpt-4.1-mini", "the model for agents with model llm-alt"),
    requestTimeoutMs: requestTimeoutMs(),
  }),
  create: (settings, { retry }) =>
    new OpenAiDialogueProvider({
      url: settings.url,
      apiKey: settings.apiKey || null,
      models: { "llm-large": settings.modelLarge, "llm-small": settings.modelSmall, "llm-alt": settings.modelAlt },
      requestTimeoutMs: settings.requestTimeoutMs,
      retry,
    }),
});
