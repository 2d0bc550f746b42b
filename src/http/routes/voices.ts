import { z } from "zod";
import type { Services } from "../../services/container.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { listEnvelope } from "../schemas/common.js";

const voiceSchema = z.object({
  id: z.string(),
  provider: z.string(),
  name: z.string(),
  language: z.string(),
  gender: z.enum(["male", "female", "neutral"]),
  sample_rate: z.number().int(),
});

const voicesQuery = z.object({ language: z.string().optional() }).strict();

export function voiceRoutes({ voices }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/voices",
      operationId: "listVoices",
      summary: "Voices the configured text-to-speech providers offer (an agent's voice_id names one)",
      tag: "Voices",
      permission: null,
      query: voicesQuery,
      response: listEnvelope(voiceSchema),
      status: 200,
      errors: ["invalid_request"],
      handler: async ({ query }) => {
        const data = voices.list().filter((v) => !query.language || v.language.toLowerCase() === query.language.toLowerCase());
        return { data, has_more: false, next_cursor: null, total: data.length };
      },
    }),
  ];
}
