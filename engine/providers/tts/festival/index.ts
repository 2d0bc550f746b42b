import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { FestivalTts } from "./festival-tts.js";

export const festivalDefinition = defineProvider({
  name: "festival",
  stage: "tts",
  description: "embedded Festival voices (offline; slt HTS and kal, from warm festival processes; needs the Debian packages festival, festvox-us-slt-hts, festvox-kallpc16k)",
  remote: false,
  settings: z.object({
    festivalProcesses: z.coerce.number().int().min(1).max(16).default(1).describe("festival processes per voice, each saying one sentence at a time"),
  }),
  create: (settings) => new FestivalTts({ processes: settings.festivalProcesses }),
});
