import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { FliteTts } from "./flite-tts.js";

export const fliteDefinition = defineProvider({
  name: "flite",
  stage: "tts",
  description: "embedded Flite voices (offline; PARLEY_TTS_WORKERS sets its threads); always offered, and the voice of last resort",
  remote: false,
  settings: z.object({}),
  create: (_settings, { embedded }) => new FliteTts({ workers: embedded.ttsWorkers }),
});
