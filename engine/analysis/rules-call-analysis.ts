import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js";
import { WallClockReader } from "../providers/llm/rules/wall-clock.js";
import { SUCCESSFUL_OUTCOMES, type AnalysisInput, type CallAnalysis, type FieldValue } from "./call-analysis.js";
import { readCallFacts, type CallFacts } from "./call-facts.js";
import { callerSentiment } from "./caller-sentiment.js";
import { summarizeCall } from "./call-summary-text.js";
import { extractFields } from "./field-extraction.js";

/** Keys of `extracted_data` the analysis fills itself; an agent's own fields may not take them. */
export const BUILT_IN_DATA_KEYS = [
  "appointment_id",
  "appointment_date",
  "appointment_time",
  "service",
  "customer_name",
  "customer_email",
  "customer_phone",
  "callback_date",
  "callback_time",
] as const;

/**
 * The deterministic analysis: the outcome from the agent's actions (see `readCallFacts`),
 * the other side's sentiment from VADER, a summary from a template, and each declared field
 * that a typed reader finds in the caller's words (null otherwise). Same call, same analysis.
 */
export function analyzeByRules(input: AnalysisInput): CallAnalysis {
  const facts = readCallFacts(input);
  const sentiment = callerSentiment(input.transcript);
  const fields = extractFields(input.fields, input.transcript, {
    clock: new WallClockReader(input.timeZone).read(input.startedAt),
    defaultCountry: countryOf(input.farEndNumber),
  });
  return {
    source: "rules",
    summary: summarizeCall(input, facts, sentiment),
    outcome: facts.outcome,
    success: SUCCESSFUL_OUTCOMES.has(facts.outcome),
    sentiment,
    extracted_data: { ...factData(facts), ...fields },
  };
}

/** What the facts put into `extracted_data`: the booking, and the callback's day and time. */
export function factData(facts: CallFacts): Record<string, FieldValue> {
  return {
    ...(facts.booking ?? {}),
    ...(facts.callback ? { callback_date: facts.callback.date, callback_time: facts.callback.time } : {}),
  };
}

/** The country of the other side's number: numbers said without a country code are read in it (else US). */
function countryOf(number: string | null): CountryCode {
  return (number ? parsePhoneNumberFromString(number)?.country : undefined) ?? "US";
}
