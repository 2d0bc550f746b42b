import { z } from "zod";
import { ANALYSIS_FIELD_TYPES, CALL_OUTCOMES } from "../../../engine/index.js";
import { CALL_DIRECTIONS, CALL_STATUSES } from "../../db/repositories/calls.js";
import { MAX_CALL_DURATION_SECONDS } from "../../services/call-limits.js";
import { callListItemSchema } from "./calls-shared.js";
import { DATE_RANGE_ISSUE, dateRangeInOrder, dateRangeShape, e164, includeQuery, listEnvelope, listQueryShape, metadataSchema } from "./common.js";
import type { CreateCallInput } from "../../services/calls.js";


const maxDurationRule = `must be an integer from 1 to ${MAX_CALL_DURATION_SECONDS} (seconds)`;

/** What every call is started with, by phone (POST /v1/calls) or from a browser (POST /v1/calls/web). */
const callSettingsShape = {
  agent_id: z.string({ error: "must be an agent id" }).min(1, { message: "must not be empty" }),
  /** The guide's personalisation values for the agent (customer name, purpose, ...). */
  context: metadataSchema.optional(),
  record: z.boolean({ error: "must be true or false" }).optional(),
  max_duration: z
    .number({ error: maxDurationRule })
    .int({ message: maxDurationRule })
    .min(1, { message: maxDurationRule })
    .max(MAX_CALL_DURATION_SECONDS, { message: maxDurationRule })
    .optional(),
};

export const createCallBody = z
  .object({
    phone_number: e164("phone_number").optional(),
    /** The earlier guide's name for phone_number. */
    to: e164("to").optional(),
    agent_id: callSettingsShape.agent_id,
    from_number: e164("from_number").optional(),
    metadata: metadataSchema.optional(),
    context: callSettingsShape.context,
    // Checked against the webhook URL policy (which depends on configuration) by the service.
    webhook_url: z.string({ error: "must be an https:// URL" }).optional(),
    record: callSettingsShape.record,
    max_duration: callSettingsShape.max_duration,
  })
  .strict()
  // Runs even when other fields failed, so a missing destination is reported with them.
  .superRefine(
    (value, ctx) => {
      if (typeof value !== "object" || value === null) return;
      if (value.to !== undefined && value.phone_number !== undefined) {
        ctx.addIssue({ code: "custom", path: ["to"], message: "give phone_number or its alias to, not both" });
      } else if (value.to === undefined && value.phone_number === undefined) {
        ctx.addIssue({ code: "custom", path: ["phone_number"], message: "is required" });
      }
    },
    { when: () => true },
  )
  .transform(({ to, phone_number, ...rest }) => ({ ...rest, phone_number: (phone_number ?? to)! }));


/** POST /v1/calls/web: a token for a browser to connect a call with (see WebCallTokens). */
export const createWebCallBody = z.object(callSettingsShape).strict();

export const webCallCreatedSchema = z.object({
  call_id: z.string().describe("the id the call gets once the browser connects (GET /v1/calls/{id} finds it from then on)"),
  token: z.string().describe("single-use, expires at expires_at; already in websocket_url"),
  websocket_url: z.string().describe("/media/ws with the token; append &format=pcm16&sample_rate=16000 (or opus) and connect"),
  expires_at: z.string(),
});

export const listCallsQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(CALL_STATUSES, { error: `must be one of ${CALL_STATUSES.join(", ")}` }).optional(),
    outcome: z.enum(CALL_OUTCOMES, { error: `must be one of ${CALL_OUTCOMES.join(", ")}` }).optional(),
    agent_id: z.string().min(1, { message: "must not be empty" }).optional(),
    phone_number: e164("phone_number").optional(),
    direction: z.enum(CALL_DIRECTIONS, { error: `must be one of ${CALL_DIRECTIONS.join(", ")}` }).optional(),
    ...dateRangeShape,
  })
  .strict()
  .refine(dateRangeInOrder, DATE_RANGE_ISSUE);

export const getCallQuery = z.object({ include: includeQuery(["transcript", "recording", "analysis", "latency", "tool_calls"] as const) }).strict();

/** What POST /v1/calls answers: the reference's creation fields plus `direction`. */
export const callCreatedSchema = callListItemSchema
  .pick({ id: true, status: true, direction: true, phone_number: true, from_number: true, agent_id: true, metadata: true, created_at: true })
  .extend({ record: z.boolean() });

export const callSchema = callListItemSchema.extend({
  record: z.boolean(),
  max_duration: z.number().int(),
  answered_at: z.string().nullable(),
});

const fieldValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** What a connected call came to (null until it is stored, and for calls that never connected). */
export const callAnalysisSchema = z.object({
  source: z.enum(["rules", "llm", "rules_fallback"]).describe("rules: read from the conversation without a model; llm: written by the model; rules_fallback: the model failed (see fallback_reason)"),
  summary: z.string(),
  outcome: z.enum(CALL_OUTCOMES),
  success: z.boolean(),
  sentiment: z.object({ overall: z.enum(["positive", "neutral", "negative"]), score: z.number().min(0).max(1) }),
  extracted_data: z
    .record(z.string(), fieldValue)
    .describe(`The booked appointment (appointment_id, appointment_date, appointment_time, service, customer_name, customer_email, customer_phone), a callback's callback_date and callback_time, and each of the agent's analysis_fields (${ANALYSIS_FIELD_TYPES.join(", ")}; null when the call did not say it)`),
  fallback_reason: z.string().optional(),
});

const turnLatencySchema = z.object({
  turn_id: z.number().int(),
  end_of_speech_at: z.number().nullable().describe("seconds from the start of the call to the caller's last word; null for turns that answer no caller speech (the greeting)"),
  endpoint_ms: z.number().int().nullable(),
  asr_final_ms: z.number().int().nullable(),
  first_token_ms: z.number().int().nullable(),
  first_audio_ms: z.number().int().nullable(),
  voice_to_voice_ms: z.number().int().nullable(),
  interrupted: z.boolean(),
});

/** Each agent turn's latency, ms after the caller's end of speech (or the start of the call). */
export const callLatencySchema = z.object({
  turns: z.array(turnLatencySchema),
  voice_to_voice_p50_ms: z.number().int().nullable(),
  voice_to_voice_p95_ms: z.number().int().nullable(),
});

/** One tool the agent ran on the call, as it ran: what it was asked and what it answered. */
const toolCallSchema = z.object({
  name: z.string().describe("the tool: a built-in one (book_appointment, search_knowledge, ...) or one of the agent's custom tools"),
  arguments: z.record(z.string(), z.unknown()).describe("what the dialogue called it with (from the caller's words)"),
  ok: z.boolean(),
  data: z.record(z.string(), z.unknown()).nullable().describe("the tool's answer (a custom tool's: its URL's JSON); null when it gave none"),
  error: z.string().nullable().describe("why it failed, as the dialogue was told; null when ok"),
});

export const callReadSchema = callSchema.extend({
  transcript: z.array(z.object({ role: z.enum(["agent", "user"]), content: z.string(), timestamp: z.number(), agent_id: z.string().optional().describe("on an agent segment said by an agent the call was handed off to (docs/handoffs.md)") })).optional(),
  recording_url: z.string().nullable().optional(),
  analysis: callAnalysisSchema.nullable().optional(),
  latency: callLatencySchema.nullable().optional(),
  tool_calls: z.array(toolCallSchema).optional().describe("the agent's tool calls in the order run; [] when none (and once the call's content is deleted)"),
});

export const callListSchema = listEnvelope(callListItemSchema);

// The bodies validate into what the service takes (its input types are its own).
createCallBody satisfies z.ZodType<CreateCallInput>;
