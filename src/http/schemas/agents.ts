import { z } from "zod";
import { ANALYSIS_FIELD_TYPES, BUILT_IN_DATA_KEYS, CALL_OUTCOMES, checkRedactSetting, ENDPOINTING_MODES, KNOWLEDGE_SEARCH_TOOL, REDACTION_KINDS, type RedactSetting } from "../../../engine/index.js";
import { AGENT_STATUSES, TRANSFER_MODES } from "../../db/repositories/agents.js";
import { isReservedHeader, SECRET_REFERENCE } from "../../services/http-tool-rules.js";
import { CALL_TOOL_NAMES } from "../../telephony/call-tool-definitions.js";
import { AGENT_MODELS, AGENT_LIMITS, INTENT_FAILURE_DEFAULT } from "../../services/agent-defaults.js";
import { bookingHoursOf } from "../../services/booking-calendar.js";
import { e164, includeQuery, intField, listEnvelope, listQueryShape, metadataSchema } from "./common.js";
import { callListItemSchema } from "./calls-shared.js";
import type { CreateAgentInput, UpdateAgentInput } from "../../services/agents.js";
import type { AgentIntent } from "../../db/repositories/agents.js";

const L = AGENT_LIMITS;
const nonBlank = (max: number) =>
  z.string().max(max, { message: `must be at most ${max} characters` }).refine((s) => s.trim().length > 0, { message: "must not be empty" });

const FIELD_NAME = /^[a-z][a-z0-9_]*$/;

/** One value each call's analysis reads (see docs/call-results.md). */
const analysisField = z
  .object({
    name: z
      .string({ error: "must be a string" })
      .max(L.analysisFieldName, { message: `must be at most ${L.analysisFieldName} characters` })
      .regex(FIELD_NAME, { message: "must be snake_case: a lower-case letter, then lower-case letters, digits or _" })
      .refine((name) => !(BUILT_IN_DATA_KEYS as readonly string[]).includes(name), {
        message: `is filled by the analysis itself; choose a name other than ${BUILT_IN_DATA_KEYS.join(", ")}`,
      }),
    type: z.enum(ANALYSIS_FIELD_TYPES, { error: `must be one of ${ANALYSIS_FIELD_TYPES.join(", ")}` }),
    description: nonBlank(L.analysisFieldDescription),
    enum: z.array(nonBlank(L.analysisFieldEnumValue)).min(1, { message: "must list at least one value" }).max(L.analysisFieldEnumValues, { message: `at most ${L.analysisFieldEnumValues} values` }).optional(),
  })
  .strict()
  .superRefine((field, ctx) => {
    if (field.type === "enum" && field.enum === undefined) ctx.addIssue({ code: "custom", path: ["enum"], message: "is required when type is enum" });
    if (field.type !== "enum" && field.enum !== undefined) ctx.addIssue({ code: "custom", path: ["enum"], message: "is only for fields of type enum" });
    if (field.enum && new Set(field.enum).size !== field.enum.length) ctx.addIssue({ code: "custom", path: ["enum"], message: "must not repeat a value" });
  });

const analysisFields = z
  .array(analysisField)
  .max(L.analysisFields, { message: `at most ${L.analysisFields} fields` })
  .superRefine((fields, ctx) => {
    const seen = new Set<string>();
    fields.forEach((field, i) => {
      if (seen.has(field.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `repeats the field name ${field.name}` });
      seen.add(field.name);
    });
  });

/** Names a custom tool may not take: the calls' own tools (`handoff` among them). */
const BUILT_IN_TOOLS: readonly string[] = [...CALL_TOOL_NAMES, KNOWLEDGE_SEARCH_TOOL];

/** One custom HTTP tool (see AgentTool); its URL and secrets are checked by the service. */
const agentTool = z
  .object({
    name: z
      .string({ error: "must be a string" })
      .max(L.toolName, { message: `must be at most ${L.toolName} characters` })
      .regex(FIELD_NAME, { message: "must be snake_case: a lower-case letter, then lower-case letters, digits or _" })
      .refine((name) => !BUILT_IN_TOOLS.includes(name), { message: `is a built-in tool; choose a name other than ${BUILT_IN_TOOLS.join(", ")}` }),
    description: nonBlank(L.toolDescription),
    parameters: z
      .record(z.string(), z.unknown(), { error: "must be a JSON Schema object" })
      .refine((schema) => schema.type === "object", { message: 'must be a JSON Schema with "type": "object"' })
      .refine((schema) => Buffer.byteLength(JSON.stringify(schema)) <= L.toolParametersBytes, { message: `must be at most ${L.toolParametersBytes} bytes of JSON` }),
    url: z.string({ error: "must be a string" }).min(1, { message: "must not be empty" }).max(L.toolUrl, { message: `must be at most ${L.toolUrl} characters` }),
    method: z.enum(["POST"], { error: "must be POST" }).default("POST"),
    timeout_ms: intField(L.toolTimeoutMs.min, L.toolTimeoutMs.max).default(L.toolTimeoutMs.default),
    headers: z
      .record(
        z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, { message: "must be an HTTP header name" }).refine((name) => !isReservedHeader(name), { message: "is set by Parley itself" }),
        z
          .string({ error: "must be a string" })
          .max(L.toolHeaderValue, { message: `must be at most ${L.toolHeaderValue} characters` })
          .regex(/^[\x20-\x7e\t]*$/, { message: "must be printable ASCII on one line" })
          .refine((value) => !value.replace(SECRET_REFERENCE, "").includes("{{"), { message: "may hold {{secrets.NAME}} and no other template" }),
      )
      .refine((headers) => Object.keys(headers).length <= L.toolHeaders, { message: `at most ${L.toolHeaders} headers` })
      .default({}),
    signing_secret: z.string({ error: "must be the name of a secret (POST /v1/secrets)" }).regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: "must be the name of a secret (POST /v1/secrets)" }),
  })
  .strict();

const agentTools = z
  .array(agentTool)
  .max(L.tools, { message: `at most ${L.tools} tools` })
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      if (seen.has(tool.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `repeats the tool name ${tool.name}` });
      seen.add(tool.name);
    });
  });

/**
 * A request the rules dialogue answers (AgentIntent): with one of the agent's tools
 * (`tool`, `slots`, `failure`), or by passing the caller to another agent (`handoff_to`). The
 * tool and slots are checked against `tools`, `handoff_to` against `handoffs`, by the service.
 */
const agentIntent = z
  .object({
    examples: z.array(nonBlank(L.intentExample)).min(1, { message: "must list at least one phrasing" }).max(L.intentExamples, { message: `at most ${L.intentExamples} phrasings` }),
    tool: z.string({ error: "must be the name of one of the agent's tools" }).regex(FIELD_NAME, { message: "must be the name of one of the agent's tools" }).optional(),
    handoff_to: z.string({ error: "must be the id of an agent in handoffs" }).min(1, { message: "must be the id of an agent in handoffs" }).max(64).optional(),
    slots: z
      .array(z.object({ name: z.string({ error: "must be a parameter of the tool" }).min(1).max(L.toolName), question: nonBlank(L.intentQuestion) }).strict())
      .max(L.intentSlots, { message: `at most ${L.intentSlots} slots` })
      .optional()
      .describe("with tool: the arguments it asks for; default []"),
    reply: nonBlank(L.intentReply),
    failure: nonBlank(L.intentReply).optional().describe(`with tool: what it says when the tool fails; default "${INTENT_FAILURE_DEFAULT}"`),
  })
  .strict()
  .superRefine((intent, ctx) => {
    const kinds = "either tool (answered with one of the agent's tools) or handoff_to (passed to one of its handoffs)";
    if (intent.tool === undefined && intent.handoff_to === undefined) ctx.addIssue({ code: "custom", path: [], message: `needs ${kinds}` });
    if (intent.tool !== undefined && intent.handoff_to !== undefined) ctx.addIssue({ code: "custom", path: [], message: `takes ${kinds}, not both` });
    if (intent.handoff_to !== undefined) {
      for (const key of ["slots", "failure"] as const) {
        if (intent[key] !== undefined) ctx.addIssue({ code: "custom", path: [key], message: "is only for an intent with a tool; a hand-off intent asks nothing" });
      }
    }
  })
  .transform(({ examples, tool, handoff_to, slots, reply, failure }): AgentIntent =>
    handoff_to !== undefined ? { examples, handoff_to, reply } : { examples, tool: tool!, slots: slots ?? [], reply, failure: failure ?? INTENT_FAILURE_DEFAULT },
  );

const agentIntents = z.array(agentIntent).max(L.intents, { message: `at most ${L.intents} intents` });

/** Another agent of the account a call may be passed to (AgentHandoff); the service checks the id. */
const agentHandoff = z
  .object({
    agent_id: z.string({ error: "must be an agent id" }).min(1, { message: "must be an agent id" }).max(64),
    description: nonBlank(L.handoffDescription),
  })
  .strict();

const agentHandoffs = z
  .array(agentHandoff)
  .max(L.handoffs, { message: `at most ${L.handoffs} hand-offs` })
  .superRefine((handoffs, ctx) => {
    const seen = new Set<string>();
    handoffs.forEach(({ agent_id }, i) => {
      if (seen.has(agent_id)) ctx.addIssue({ code: "custom", path: [i, "agent_id"], message: "must not repeat an agent" });
      seen.add(agent_id);
    });
  });

/**
 * What an agent's calls must not keep: kinds, or `{name, pattern}` rules whose patterns must run
 * on RE2 (checked by the engine's checkRedactSetting, whose message names the item).
 */
const agentRedact = z
  .array(z.union([z.string(), z.object({ name: z.string(), pattern: z.string() }).strict()]), { error: "must be an array of kinds and {name, pattern} rules" })
  .superRefine((setting, ctx) => {
    const problem = checkRedactSetting(setting);
    if (problem === null) return;
    // "redact[2].pattern: why" -> path [2, "pattern"], message "why".
    const [, where = "", why = problem] = /^redact((?:\[\d+\]|\.\w+)*): (.*)$/s.exec(problem) ?? [];
    const path = [...where.matchAll(/\[(\d+)\]|\.(\w+)/g)].map((m) => (m[1] !== undefined ? Number(m[1]) : m[2]!));
    ctx.addIssue({ code: "custom", path, message: why });
  })
  .transform((setting) => setting as RedactSetting);

/** Every writable agent field with its rules; create and update both build on these. */
const agentFields = {
  name: nonBlank(L.name),
  system_prompt: nonBlank(L.systemPrompt),
  voice_id: z.string().min(1, { message: "must not be empty" }),
  first_message: nonBlank(L.firstMessage).nullable(),
  language: z.string().min(2, { message: "must be a language tag like en-US" }).max(35),
  model: z.enum(AGENT_MODELS, { error: `must be one of ${AGENT_MODELS.join(", ")}` }),
  temperature: z.number({ error: "must be a number from 0.0 to 1.0" }).min(0, { message: "must be from 0.0 to 1.0" }).max(1, { message: "must be from 0.0 to 1.0" }),
  max_tokens: intField(1, L.maxTokens),
  interruption_threshold: z.number({ error: "must be a number from 0.0 to 1.0" }).min(0, { message: "must be from 0.0 to 1.0" }).max(1, { message: "must be from 0.0 to 1.0" }),
  end_call_phrases: z.array(nonBlank(L.endCallPhrase)).max(L.endCallPhrases, { message: `at most ${L.endCallPhrases} phrases` }),
  // `booking_hours` in metadata governs bookings (see booking-calendar.ts): a bad one is refused here, not at the first booking.
  metadata: metadataSchema.superRefine((metadata, ctx) => {
    const hours = bookingHoursOf(metadata);
    if ("problem" in hours) ctx.addIssue({ code: "custom", path: ["booking_hours"], message: hours.problem });
  }),
  transfer_enabled: z.boolean({ error: "must be true or false" }),
  transfer_number: e164("transfer_number").nullable(),
  transfer_message: nonBlank(L.transferMessage),
  transfer_mode: z.enum(TRANSFER_MODES, { error: `must be one of ${TRANSFER_MODES.join(", ")}` }),
  endpointing_mode: z.enum(ENDPOINTING_MODES, { error: `must be one of ${ENDPOINTING_MODES.join(", ")}` }),
  endpointing_ms: intField(100, 3000),
  analysis_fields: analysisFields,
  tools: agentTools,
  intents: agentIntents,
  knowledge_base_ids: z
    .array(z.string({ error: "must be a knowledge base id" }).min(1).max(64))
    .max(L.knowledgeBases, { message: `at most ${L.knowledgeBases} knowledge bases` })
    .refine((ids) => new Set(ids).size === ids.length, { message: "must not repeat an id" }),
  handoffs: agentHandoffs,
  redact: agentRedact,
  reminder_minutes_before: intField(5, L.reminderMinutesBefore, ", or null for no reminders").nullable(),
  reminder_call: z.boolean({ error: "must be true or false" }),
  reminder_call_inbound: z.boolean({ error: "must be true or false" }),
};

/** The earlier guide's names, accepted as aliases. */
const aliasFields = {
  personality: agentFields.system_prompt.optional(),
  greeting: agentFields.first_message.optional(),
};

function resolveAliases<T extends { personality?: string | undefined; greeting?: string | null | undefined; system_prompt?: string | undefined; first_message?: string | null | undefined }>(
  value: T,
  ctx: z.RefinementCtx,
) {
  const { personality, greeting, ...rest } = value;
  if (personality !== undefined && rest.system_prompt !== undefined) {
    ctx.addIssue({ code: "custom", path: ["system_prompt"], message: "give system_prompt or its alias personality, not both" });
  }
  if (greeting !== undefined && rest.first_message !== undefined) {
    ctx.addIssue({ code: "custom", path: ["first_message"], message: "give first_message or its alias greeting, not both" });
  }
  return {
    ...rest,
    ...(personality !== undefined ? { system_prompt: personality } : {}),
    ...(greeting !== undefined ? { first_message: greeting } : {}),
  };
}

export const createAgentBody = z
  .object({
    ...agentFields,
    ...aliasFields,
    system_prompt: agentFields.system_prompt.optional(),
    first_message: agentFields.first_message.optional(),
    language: agentFields.language.optional(),
    model: agentFields.model.optional(),
    temperature: agentFields.temperature.optional(),
    max_tokens: agentFields.max_tokens.optional(),
    interruption_threshold: agentFields.interruption_threshold.optional(),
    end_call_phrases: agentFields.end_call_phrases.optional(),
    metadata: agentFields.metadata.optional(),
    transfer_enabled: agentFields.transfer_enabled.optional(),
    transfer_number: agentFields.transfer_number.optional(),
    transfer_message: agentFields.transfer_message.optional(),
    transfer_mode: agentFields.transfer_mode.optional(),
    endpointing_mode: agentFields.endpointing_mode.optional(),
    endpointing_ms: agentFields.endpointing_ms.optional(),
    analysis_fields: agentFields.analysis_fields.optional(),
    tools: agentFields.tools.optional(),
    intents: agentFields.intents.optional(),
    knowledge_base_ids: agentFields.knowledge_base_ids.optional(),
    handoffs: agentFields.handoffs.optional(),
    redact: agentFields.redact.optional(),
    reminder_minutes_before: agentFields.reminder_minutes_before.optional(),
    reminder_call: agentFields.reminder_call.optional(),
    reminder_call_inbound: agentFields.reminder_call_inbound.optional(),
  })
  .strict()
  .transform(resolveAliases)
  .superRefine((value, ctx) => {
    if (value.system_prompt === undefined) ctx.addIssue({ code: "custom", path: ["system_prompt"], message: "is required" });
  });

export const updateAgentBody = z
  .object({
    name: agentFields.name.optional(),
    system_prompt: agentFields.system_prompt.optional(),
    voice_id: agentFields.voice_id.optional(),
    first_message: agentFields.first_message.optional(),
    language: agentFields.language.optional(),
    model: agentFields.model.optional(),
    temperature: agentFields.temperature.optional(),
    max_tokens: agentFields.max_tokens.optional(),
    interruption_threshold: agentFields.interruption_threshold.optional(),
    end_call_phrases: agentFields.end_call_phrases.optional(),
    status: z.enum(AGENT_STATUSES, { error: "must be active or inactive" }).optional(),
    metadata: agentFields.metadata.optional(),
    transfer_enabled: agentFields.transfer_enabled.optional(),
    transfer_number: agentFields.transfer_number.optional(),
    transfer_message: agentFields.transfer_message.optional(),
    transfer_mode: agentFields.transfer_mode.optional(),
    endpointing_mode: agentFields.endpointing_mode.optional(),
    endpointing_ms: agentFields.endpointing_ms.optional(),
    analysis_fields: agentFields.analysis_fields.optional(),
    tools: agentFields.tools.optional(),
    intents: agentFields.intents.optional(),
    knowledge_base_ids: agentFields.knowledge_base_ids.optional(),
    handoffs: agentFields.handoffs.optional(),
    redact: agentFields.redact.optional(),
    reminder_minutes_before: agentFields.reminder_minutes_before.optional(),
    reminder_call: agentFields.reminder_call.optional(),
    reminder_call_inbound: agentFields.reminder_call_inbound.optional(),
    ...aliasFields,
  })
  .strict()
  .transform(resolveAliases);


export const listAgentsQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(AGENT_STATUSES, { error: "must be active or inactive" }).optional(),
    search: z.string().max(200).optional(),
  })
  .strict();

export const getAgentQuery = z.object({ include: includeQuery(["stats", "recent_calls"] as const) }).strict();

export const agentSchema = z.object({
  id: z.string(),
  name: z.string(),
  system_prompt: z.string(),
  voice_id: z.string(),
  first_message: z.string().nullable(),
  language: z.string(),
  model: z.enum(AGENT_MODELS),
  temperature: z.number(),
  max_tokens: z.number().int(),
  interruption_threshold: z.number(),
  end_call_phrases: z.array(z.string()),
  status: z.enum(AGENT_STATUSES),
  metadata: z.record(z.string(), z.unknown()),
  transfer_enabled: z.boolean(),
  transfer_number: z.string().nullable(),
  transfer_message: z.string(),
  transfer_mode: z
    .enum(TRANSFER_MODES)
    .describe("how a call is passed to transfer_number: `cold` hands it over at once (the carrier's transfer); `warm` has Parley call transfer_number first, tell the person who answers what the call is about, then connect the caller"),
  endpointing_mode: z
    .enum(ENDPOINTING_MODES)
    .describe("how the end of the caller's turn is decided: `fixed` waits endpointing_ms of silence; `adaptive` ends a complete-sounding turn after a short pause and waits longer for an incomplete one, never past endpointing_ms"),
  endpointing_ms: z.number().int().describe("the silence that ends the caller's turn (`fixed`), or the most the wait lasts (`adaptive`)"),
  analysis_fields: z.array(
    z.object({ name: z.string(), type: z.enum(ANALYSIS_FIELD_TYPES), description: z.string(), enum: z.array(z.string()).optional() }),
  ),
  tools: z
    .array(
      z.object({
        name: z.string(),
        description: z.string(),
        parameters: z.record(z.string(), z.unknown()),
        url: z.string(),
        method: z.enum(["POST"]),
        timeout_ms: z.number().int(),
        headers: z.record(z.string(), z.string()).describe("as given: {{secrets.NAME}} stays a reference; secret values are never shown"),
        signing_secret: z.string().describe("the name of the account secret the tool's requests are signed with (X-Parley-Signature)"),
      }),
    )
    .describe("custom HTTP tools the agent may call mid-call (docs/tools.md)"),
  intents: z
    .array(
      z.union([
        z.object({
          examples: z.array(z.string()),
          tool: z.string(),
          slots: z.array(z.object({ name: z.string(), question: z.string() })),
          reply: z.string(),
          failure: z.string(),
        }),
        z.object({
          examples: z.array(z.string()),
          handoff_to: z.string().describe("the agent (one of handoffs) the caller is passed to"),
          reply: z.string(),
        }),
      ]),
    )
    .describe(
      "requests a rules agent answers with one of its tools (phrasings, the tool, the arguments it asks for, what it says after; docs/tools.md) or by passing the caller to one of its handoffs (phrasings, handoff_to, what it says first; docs/handoffs.md)",
    ),
  knowledge_base_ids: z.array(z.string()).describe("knowledge bases the agent answers callers' questions from (docs/knowledge-bases.md)"),
  handoffs: z
    .array(z.object({ agent_id: z.string(), description: z.string().describe("when to pass the caller on") }))
    .describe("other agents of the account a call may be passed to, whose voice, prompt and tools then take over (docs/handoffs.md)"),
  redact: z
    .array(z.union([z.enum(REDACTION_KINDS), z.object({ name: z.string(), pattern: z.string() })]))
    .describe("what the agent's calls must not keep: kinds (card_number, ssn, email, phone_number, date_of_birth) or {name, pattern} rules; replaced by [kind] in stored transcripts, analyses and events, and by a tone in recordings (docs/redaction.md)"),
  reminder_minutes_before: z.number().int().nullable(),
  reminder_call: z.boolean(),
  reminder_call_inbound: z
    .boolean()
    .describe("a reminder call may also dial customers who booked on an inbound call, at the number their caller ID gave (caller IDs can be forged; off by default)"),
  created_at: z.string(),
  updated_at: z.string(),
});

export const agentStatsSchema = z.object({
  total_calls: z.number().int(),
  total_duration_minutes: z.number().int(),
  avg_call_duration_seconds: z.number(),
  success_rate: z.number(),
  outcomes: z.record(z.enum(CALL_OUTCOMES), z.number().int()).describe("the agent's analysed calls by outcome"),
});

export const agentReadSchema = agentSchema.extend({
  stats: agentStatsSchema.optional(),
  recent_calls: z.array(callListItemSchema).optional(),
});

export const agentListItemSchema = agentSchema.pick({
  id: true,
  name: true,
  voice_id: true,
  language: true,
  model: true,
  status: true,
  created_at: true,
  updated_at: true,
});

export const agentListSchema = listEnvelope(agentListItemSchema);

// The bodies validate into what the service takes (its input types are its own).
createAgentBody satisfies z.ZodType<CreateAgentInput>;
updateAgentBody satisfies z.ZodType<UpdateAgentInput>;
