/** Agent defaults and bounds: the reference's values, plus Parley's documented additions. */

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
  endpointing_ms: 500,
  /** A day before. */
  reminder_minutes_before: 1440 as number | null,
  reminder_call: false,
};

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
};
