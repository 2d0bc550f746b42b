import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { apiKey, modelName, requestTimeoutMs, serviceUrl } from "../../provider-settings-schema.js";
import { AnthropicDialogueProvider } from "./anthropic-dialogue-provider.js";

export const anthropicDefinition = defineProvider({
  name: "anthropic",
  stage: "dialogue",
  description: "Anthropic Messages API (/v1/messages), streamed, with tools: Claude models; key as x-api-key",
  remote: true,
  settings: z.object({
    url: serviceUrl("https://api.anthropic.com"),
    apiKey: apiKey(),
    modelLarge: modelName("claude-sonnet-4-5", "the model for agents with model llm-large"),
    modelSmall: modelName("claude-haiku-4-5", "the model for agents with model llm-small"),
    modelAlt: modelName("claude-haiku-4-5", "the model for agents with model llm-alt"),
    requestTimeoutMs: requestTimeoutMs(),
  }),
  create: (settings, { retry }) =>
    new AnthropicDialogueProvider({
      url: settings.url,
      apiKey: settings.apiKey || null,
      models: { "llm-large": settings.modelLarge, "llm-small": settings.modelSmall, "llm-alt": settings.modelAlt },
      requestTimeoutMs: settings.requestTimeoutMs,
      retry,
    }),
});
