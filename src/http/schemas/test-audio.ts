import { z } from "zod";
import { listEnvelope, listQueryShape } from "./common.js";

export const uploadTestAudioQuery = z
  .object({
    name: z
      .string({ error: "must be a string" })
      .trim()
      .min(1, { message: "must be 1 to 255 characters" })
      .max(255, { message: "must be 1 to 255 characters" })
      .describe("The clip's name, shown in lists"),
  })
  .strict();

export const testAudioIdParam = z.object({ audio_id: z.string().min(1) }).strict();
export const listTestAudioQuery = z.object({ ...listQueryShape }).strict();

export const testAudioSchema = z.object({
  id: z.string(),
  name: z.string(),
  duration_ms: z.number().int().describe("The clip's length, as kept (8 kHz mono)"),
  created_at: z.string(),
});

export const testAudioListSchema = listEnvelope(testAudioSchema);
