import { z } from "zod";
import { CALL_OUTCOMES } from "../../../engine/index.js";
import { TEST_RUN_LIMITS } from "../../services/test-run-scenario.js";
import { intField, listEnvelope, listQueryShape } from "./common.js";

const text = (max: number) =>
  z
    .string({ error: "must be a string" })
    .trim()
    .min(1, { message: `must be 1 to ${max} characters` })
    .max(max, { message: `must be 1 to ${max} characters` });

const phrases = z.array(text(TEST_RUN_LIMITS.phraseChars), { error: "must be an array of phrases" }).max(TEST_RUN_LIMITS.phrases, { message: `must hold at most ${TEST_RUN_LIMITS.phrases} phrases` });

const DEFAULT_CALLER_VOICE = "flite-rms";

const callerSchema = z
  .object({
    lines: z
      .array(z.union([text(TEST_RUN_LIMITS.lineChars), z.object({ audio_id: z.string().min(1).max(64) }).strict()], { error: `must be text of 1 to ${TEST_RUN_LIMITS.lineChars} characters or {audio_id}` }), { error: "must be an array of lines" })
      .min(1, { message: `must hold 1 to ${TEST_RUN_LIMITS.linesPerScenario} lines` })
      .max(TEST_RUN_LIMITS.linesPerScenario, { message: `must hold 1 to ${TEST_RUN_LIMITS.linesPerScenario} lines` })
      .describe("What the caller says, a line per agent turn: text said in the caller's voice, or {audio_id} of a recording uploaded with POST /v1/test-audio"),
    voice: z.string({ error: "must be a voice id" }).min(1).max(64).default(DEFAULT_CALLER_VOICE).describe("An embedded voice (flite-* or festival-*, see GET /v1/voices)"),
    pause_ms: intField(200, 5000).default(800).describe("How long the agent must have been quiet before the caller's next line"),
    noise_db: z
      .number({ error: "must be a number from 0 to 40, or null" })
      .min(0, { message: "must be a number from 0 to 40, or null" })
      .max(40, { message: "must be a number from 0 to 40, or null" })
      .nullable()
      .default(null)
      .describe("Background noise under the caller at this signal-to-noise ratio in dB; null: none"),
    barge_in: z.array(intField(0, TEST_RUN_LIMITS.linesPerScenario - 1), { error: "must be an array of line indexes" }).max(TEST_RUN_LIMITS.linesPerScenario).default([]).describe("Indexes (from 0) of the lines said over the agent rather than after it"),
  })
  .strict()
  .superRefine((caller, ctx) => {
    caller.barge_in.forEach((index, at) => {
      if (index >= caller.lines.length) ctx.addIssue({ code: "custom", path: ["barge_in", at], message: `must be the index of one of the ${caller.lines.length} lines` });
    });
  });

const appointmentSchema = z
  .object({
    service: text(200).optional(),
    date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be YYYY-MM-DD" }).optional(),
    weekday: z.enum(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"], { error: "must be a weekday in lower case" }).optional(),
    time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: "must be HH:MM" }).optional(),
    customer_name: text(200).optional(),
  })
  .strict();

const expectSchema = z
  .object({
    outcome: z.enum(CALL_OUTCOMES, { error: `must be one of ${CALL_OUTCOMES.join(", ")}` }).optional(),
    extracted_data: z
      .record(z.string().min(1).max(64), z.union([z.string().max(500), z.number(), z.boolean(), z.null()]), { error: "must be an object of field values" })
      .refine((v) => Object.keys(v).length <= 20, { message: "must hold at most 20 fields" })
      .optional(),
    must_say: phrases.optional(),
    must_not_say: phrases.optional(),
    max_voice_to_voice_ms: intField(100, 30_000).optional(),
    appointment: appointmentSchema.optional(),
  })
  .strict();

export const scenarioSchema = z
  .object({
    name: text(100),
    caller: callerSchema,
    expect: expectSchema.default({}),
  })
  .strict();

export const createTestRunBody = z
  .object({
    scenarios: z
      .array(scenarioSchema, { error: "must be an array of scenarios" })
      .min(1, { message: `must hold 1 to ${TEST_RUN_LIMITS.scenariosPerRun} scenarios` })
      .max(TEST_RUN_LIMITS.scenariosPerRun, { message: `must hold 1 to ${TEST_RUN_LIMITS.scenariosPerRun} scenarios` }),
  })
  .strict()
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.scenarios.forEach((scenario, at) => {
      if (seen.has(scenario.name)) ctx.addIssue({ code: "custom", path: ["scenarios", at, "name"], message: "must be unique within the run" });
      seen.add(scenario.name);
    });
  });

export const testRunParams = z.object({ agent_id: z.string().min(1) }).strict();
export const testRunIdParams = z.object({ agent_id: z.string().min(1), run_id: z.string().min(1) }).strict();
export const listTestRunsQuery = z.object({ ...listQueryShape }).strict();

const expectationResult = z.object({ name: z.string(), passed: z.boolean(), expected: z.unknown(), seen: z.unknown().describe("what the call showed; null when nothing") });

export const testRunSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  status: z.enum(["running", "passed", "failed", "error"]),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  error: z.string().nullable().describe("why the run could not be carried out"),
  scenarios: z.array(
    z.object({
      name: z.string(),
      status: z.enum(["pending", "running", "passed", "failed", "error"]),
      error: z.string().nullable(),
      transcript: z.array(z.object({ role: z.enum(["agent", "user"]), content: z.string(), timestamp: z.number(), agent_id: z.string().optional() })).nullable(),
      turns: z.array(z.object({ line: z.number().int(), voice_to_voice_ms: z.number().int().nullable().describe("from the end of the caller's line to the agent's first audio, as the caller heard it") })),
      outcome: z.enum(CALL_OUTCOMES).nullable(),
      expectations: z.array(expectationResult),
    }),
  ),
});

export const testRunListSchema = listEnvelope(testRunSchema);
