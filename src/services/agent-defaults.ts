/** Agent defaults and bounds: the reference's values, plus Parley's documented additions. */

import type { EndpointingMode } from "../../engine/index.js";
import type { TransferMode } from "../db/repositories/agents.js";

export const AGENT_MODELS = ["llm-large", "llm-small", "llm-alt"] as const;
export type AgentModel = (typeof AGENT_MODELS)[number];

export const AGENT_DEFAULTS = {
  language: "en-US",
  model: "llm-large" as AgentModel,
  temperature: 0.7,
  max_tokens: 150,
  interruption_threshold: 0.5,
  end_call_phrases: [] as string[],
  metadata: {} as Record<string, unknown>,
  first_message: null as string | null,
  transfer_enabled: false,
  transfer_number: null as string | null,
  transfer_message: "Please hold while I transfer you to a member of our team.",
  /** The carrier's transfer, as before warm transfers existed (and the column's default). */
  transfer_mode: "cold" as TransferMode,
  /**
   * New agents end turns adaptively. Agents stored before migration 010 are `fixed` (the
   * column's default), so their behaviour does not change under them.
   */
  endpointing_mode: "adaptive" as EndpointingMode,
  /** A day before. */
  reminder_minutes_before: 1440 as number | null,
  reminder_call: false,
  reminder_call_inbound: false,
};

/**
 * `endpointing_ms` when none is given, by mode: for `fixed` the silence that ends the
 * caller's turn; for `adaptive` the most the wait lasts (a complete-sounding turn ends
 * sooner). Used on create, and on update when the mode changes without an `endpointing_ms`.
 */
export const ENDPOINTING_MS_DEFAULTS: Readonly<Record<EndpointingMode, number>> = Object.freeze({
  adaptive: 1500,
  fixed: 500,
});

/** What a rules agent says when an intent's tool fails, unless the intent says otherwise. */
export const INTENT_FAILURE_DEFAULT = "Sorry, I could not do that right now.";

export const AGENT_LIMITS = {
  name: 200,
  systemPrompt: 20_000,
  firstMessage: 2_000,
  maxTokens: 4_096,
  endCallPhrases: 50,
  endCallPhrase: 200,
  transferMessage: 1_000,
  analysisFields: 30,
  analysisFieldName: 64,
  analysisFieldDescription: 500,
  analysisFieldEnumValue: 100,
  analysisFieldEnumValues: 50,
  /** A week: the longest lead a reminder may have. */
  reminderMinutesBefore: 10_080,
  tools: 20,
  toolName: 64,
  toolDescription: 1_000,
  /** The parameters' JSON Schema, as JSON text. */
  toolParametersBytes: 8_192,
  toolUrl: 2_048,
  toolHeaders: 20,
  toolHeaderValue: 2_048,
  knowledgeBases: 10,
  handoffs: 5,
  handoffDescription: 500,
  intents: 20,
  intentExamples: 20,
  intentExample: 200,
  intentSlots: 10,
  intentQuestion: 300,
  intentReply: 1_000,
  /** A tool's own timeout; the call's tool runner gives up at 10 s whatever it is. */
  toolTimeoutMs: { min: 100, max: 10_000, default: 5_000 },
};
