import { z } from "zod";
import { defineProvider } from "../../provider-definition.js";
import { createRulesDialogueProvider } from "./rules-dialogue-provider.js";

export const rulesDefinition = defineProvider({
  name: "rules",
  stage: "dialogue",
  description: "embedded rule-based dialogue (offline): bookings, FAQs, transfers, callbacks from the agent's settings",
  remote: false,
  settings: z.object({}),
  create: () => createRulesDialogueProvider(),
});
