import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { apiKey, modelName, serviceUrl } from "../../provider-settings-schema.js";
import { DeepgramProvider } from "./deepgram-provider.js";

export const deepgramDefinition = defineProvider({
  name: "deepgram",
  stage: "asr",
  description: "Deepgram-compatible streaming recognition (/v1/listen over WebSocket): Deepgram, or a server speaking its protocol; key as Authorization: Token",
  remote: true,
  settings: z.object({
    url: serviceUrl("https://api.deepgram.com", ["http", "https", "ws", "wss"]),
    apiKey: apiKey(),
    model: modelName("nova-2"),
  }),
  create: (settings, { retry }) => new DeepgramProvider({ url: settings.url, apiKey: settings.apiKey || undefined, model: settings.model, retry }),
});
