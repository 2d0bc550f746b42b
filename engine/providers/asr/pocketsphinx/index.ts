import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { PocketsphinxProvider } from "./pocketsphinx-provider.js";

export const pocketsphinxDefinition = defineProvider({
  name: "pocketsphinx",
  stage: "asr",
  description: "embedded CMU Pocketsphinx recognizer processes (offline; PARLEY_ASR_RECOGNIZERS sets how many)",
  remote: false,
  settings: z.object({}),
  create: (_settings, { embedded }) => new PocketsphinxProvider({ maxRecognizers: embedded.recognizers }),
});
