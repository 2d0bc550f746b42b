import { parsePhoneNumberFromString } from "libphonenumber-js";
import type { ChatCompletionsClient } from "../providers/llm/openai/chat-completions-client.js";
import type { ChatCompletionRequest } from "../providers/llm/openai/chat-completions-wire.js";
import { WallClockReader } from "../providers/llm/rules/wall-clock.js";
import { isoDate, isoTime } from "../providers/llm/rules/calendar.js";
import {
  ACTION_OUTCOMES,
  CALL_OUTCOMES,
  SUCCESSFUL_OUTCOMES,
  type AnalysisField,
  type AnalysisInput,
  type CallAnalysis,
  type CallOutcome,
  type FieldValue,
} from "./call-analysis.js";
import { readCallFacts, type CallFacts } from "./call-facts.js";
import { factData } from "./rules-call-analysis.js";

/** The longest analysis a model may write: a few sentences and the fields. */
const MAX_TOKENS = 1000;
const MAX_SUMMARY_CHARS = 2000;
const MAX_STRING_CHARS = 500;

/** The model's answer could not be used: it is not JSON, or does not follow the schema. */
export class ModelAnalysisError extends Error {
  override readonly name = "ModelAnalysisError";
}

/**
 * The analysis written by a model: one structured-output request (a JSON schema built from the
 * agent's fields) to the OpenAI-compatible chat service, retried per its client's policy. The
 * model reads the conversation (summary, sentiment, the agent's fields, and the outcome when
 * no action settled it); what the agent's actions established (a stored booking, a transfer,
 * a voicemail, a do-not-call request, see `readCallFacts`) it cannot change, and the booking's
 * details come from the booking itself. Throws when the service fails or the answer is
 * unusable (the caller falls back to the deterministic analysis).
 */
export async function analyzeWithModel(input: AnalysisInput, client: ChatCompletionsClient, model: string, signal: AbortSignal): Promise<CallAnalysis> {
  const facts = readCallFacts(input);
  const outcomes = allowedOutcomes(facts);
  const request: ChatCompletionRequest = {
    model,
    temperature: 0,
    max_tokens: MAX_TOKENS,
    messages: [
      { role: "system", content: instructions(outcomes) },
      { role: "user", content: callText(input, facts) },
    ],
    response_format: { type: "json_schema", json_schema: { name: "call_analysis", strict: true, schema: analysisSchema(input.fields, outcomes) } },
  };
  let text = "";
  for await (const delta of client.stream(request, signal)) text += delta.content;
  if (signal.aborted) throw new ModelAnalysisError("the model did not answer in time");
  const answer = parseAnswer(text, input.fields, outcomes);
  return {
    source: "llm",
    summary: answer.summary,
    outcome: answer.outcome,
    success: SUCCESSFUL_OUTCOMES.has(answer.outcome),
    sentiment: answer.sentiment,
    extracted_data: { ...factData(facts), ...answer.fields },
  };
}

/** The outcome a model may give: the one an action settled, else any that no action makes. */
function allowedOutcomes(facts: CallFacts): readonly CallOutcome[] {
  return ACTION_OUTCOMES.has(facts.outcome) ? [facts.outcome] : CALL_OUTCOMES.filter((o) => !ACTION_OUTCOMES.has(o));
}

const OUTCOME_MEANINGS: Readonly<Record<CallOutcome, string>> = {
  appointment_booked: "an appointment was booked",
  information_provided: "the agent answered the other side's questions",
  transferred: "the call was handed to a person",
  voicemail_left: "the agent left a message on an answering machine",
  callback_requested: "the other side asked to be called back later",
  do_not_call: "the other side asked not to be called again",
  not_interested: "the other side declined what the agent offered",
  no_action: "none of the above",
  appointment_confirmed: "on a reminder call, the person confirmed their appointment",
  appointment_cancelled: "on a reminder call, the person cancelled their appointment",
  appointment_rescheduled: "on a reminder call, the appointment was moved to another time",
};

function instructions(outcomes: readonly CallOutcome[]): string {
  return [
    "You analyse a finished phone call between an AI voice agent and a person. Answer with JSON that follows the schema, and nothing else.",
    "summary: two to four plain sentences on what the call was about and what came of it, for someone skimming a call list.",
    `outcome: ${outcomes.map((o) => `"${o}" (${OUTCOME_MEANINGS[o]})`).join("; ")}.`,
    "sentiment: the person's (not the agent's) overall tone, with score from 0 (most negative) to 1 (most positive), 0.5 for neutral.",
    "fields: each value as the person stated it in the call, in the format its description gives; null when the call does not state it. Never guess.",
  ].join("\n");
}

/** The conversation as the model reads it, with what the agent did and the call's date for relative days. */
function callText(input: AnalysisInput, facts: CallFacts): string {
  const clock = new WallClockReader(input.timeZone).read(input.startedAt);
  const lines = [
    `Call: ${input.direction}, ${Math.round(input.durationSeconds)} s, agent "${input.agentName}", started ${isoDate(clock.date)} ${isoTime(clock.time)} (${input.timeZone}).`,
    `What the agent's actions established: outcome ${facts.outcome}.`,
    "Transcript (Agent / Person):",
    ...input.transcript.map((s) => `${s.role === "agent" ? "Agent" : "Person"}: ${s.content}`),
  ];
  if (input.transcript.length === 0) lines.push("(nobody spoke)");
  return lines.join("\n");
}

const FORMAT_HINTS: Readonly<Record<AnalysisField["type"], string>> = {
  string: "text",
  number: "a number",
  boolean: "true or false",
  date: "a date, YYYY-MM-DD",
  time: "a time of day, 24-hour HH:MM",
  email: "an email address",
  phone: "a phone number in E.164 form, e.g. +14155550123",
  enum: "one of the listed values",
};

/** The strict JSON schema of the answer (every property required, nulls where a value may be missing). */
export function analysisSchema(fields: readonly AnalysisField[], outcomes: readonly CallOutcome[]): Record<string, unknown> {
  const fieldSchema = (field: AnalysisField): Record<string, unknown> => {
    const description = `${field.description} (${FORMAT_HINTS[field.type]}; null when not stated)`;
    if (field.type === "enum") return { type: ["string", "null"], enum: [...(field.enum ?? []), null], description };
    const type = field.type === "number" ? "number" : field.type === "boolean" ? "boolean" : "string";
    return { type: [type, "null"], description };
  };
  return {
    type: "object",
    additionalProperties: false,
    required: ["summary", "outcome", "sentiment", "fields"],
    properties: {
      summary: { type: "string" },
      outcome: { type: "string", enum: [...outcomes] },
      sentiment: {
        type: "object",
        additionalProperties: false,
        required: ["overall", "score"],
        properties: { overall: { type: "string", enum: ["positive", "neutral", "negative"] }, score: { type: "number" } },
      },
      fields: {
        type: "object",
        additionalProperties: false,
        required: fields.map((f) => f.name),
        properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])),
      },
    },
  };
}

interface ModelAnswer {
  summary: string;
  outcome: CallOutcome;
  sentiment: CallAnalysis["sentiment"];
  fields: Record<string, FieldValue>;
}

/**
 * The model's answer, checked: a wrong summary, outcome or sentiment makes it unusable; a
 * field value of the wrong type or form is null (one bad field does not lose the rest).
 */
function parseAnswer(text: string, fields: readonly AnalysisField[], outcomes: readonly CallOutcome[]): ModelAnswer {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ModelAnalysisError(`the model's answer is not JSON (${text.length} characters)`);
  }
  const answer = isObject(value) ? value : {};
  const { summary, outcome, sentiment } = answer;
  if (typeof summary !== "string" || summary.trim() === "") throw new ModelAnalysisError("the model's answer has no summary");
  if (typeof outcome !== "string" || !(outcomes as readonly string[]).includes(outcome)) throw new ModelAnalysisError(`the model's outcome ${JSON.stringify(outcome)} is not one of ${outcomes.join(", ")}`);
  const overall = isObject(sentiment) ? sentiment.overall : undefined;
  const score = isObject(sentiment) ? sentiment.score : undefined;
  if ((overall !== "positive" && overall !== "neutral" && overall !== "negative") || typeof score !== "number" || !(score >= 0 && score <= 1)) {
    throw new ModelAnalysisError("the model's sentiment is not {overall: positive|neutral|negative, score: 0..1}");
  }
  const given = isObject(answer.fields) ? answer.fields : {};
  return {
    summary: summary.trim().slice(0, MAX_SUMMARY_CHARS),
    outcome: outcome as CallOutcome,
    sentiment: { overall, score: Math.round(score * 100) / 100 },
    fields: Object.fromEntries(fields.map((f) => [f.name, checkedValue(f, given[f.name])])),
  };
}

/** A field value of the right type and form, else null. */
export function checkedValue(field: AnalysisField, value: unknown): FieldValue {
  switch (field.type) {
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? value : null;
    case "boolean":
      return typeof value === "boolean" ? value : null;
    case "enum":
      return typeof value === "string" && (field.enum ?? []).includes(value) ? value : null;
    case "date":
      return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) ? value : null;
    case "time":
      return typeof value === "string" && /^([01]\d|2[0-3]):[0-5]\d$/.test(value) ? value : null;
    case "email":
      return typeof value === "string" && /^[^\s@]+@[^\s@]+\.[a-z]{2,}$/i.test(value) ? value.toLowerCase() : null;
    case "phone": {
      const parsed = typeof value === "string" ? parsePhoneNumberFromString(value) : undefined;
      return parsed?.isValid() ? parsed.number : null;
    }
    case "string":
      return typeof value === "string" && value.trim() !== "" ? value.trim().slice(0, MAX_STRING_CHARS) : null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
