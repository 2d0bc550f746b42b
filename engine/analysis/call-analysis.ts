import type { CallAction, CallEndReason, TranscriptSegment } from "../call-events.js";

/**
 * What a call came to, as its analysis reports it. The `appointment_*` outcomes of reminder
 * calls follow the general ones. Successes (see SUCCESSFUL_OUTCOMES) are the calls where the
 * agent achieved something the caller or the business wanted.
 */
export const CALL_OUTCOMES = [
  "appointment_booked",
  "information_provided",
  "transferred",
  "voicemail_left",
  "callback_requested",
  "do_not_call",
  "not_interested",
  "no_action",
  "appointment_confirmed",
  "appointment_cancelled",
  "appointment_rescheduled",
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export const SUCCESSFUL_OUTCOMES: ReadonlySet<CallOutcome> = new Set<CallOutcome>([
  "appointment_booked",
  "information_provided",
  "transferred",
  "voicemail_left",
  "callback_requested",
  "appointment_confirmed",
  "appointment_cancelled",
  "appointment_rescheduled",
]);

/** Outcomes that only an action of the agent makes (a stored booking, a hand-off, ...): a model's reading never overrides them. */
export const ACTION_OUTCOMES: ReadonlySet<CallOutcome> = new Set<CallOutcome>([
  "appointment_booked",
  "transferred",
  "voicemail_left",
  "do_not_call",
  "appointment_confirmed",
  "appointment_cancelled",
  "appointment_rescheduled",
]);

export const ANALYSIS_FIELD_TYPES = ["string", "number", "boolean", "date", "time", "email", "phone", "enum"] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];

/** A value an agent wants read from each of its calls (`analysis_fields`). */
export interface AnalysisField {
  name: string;
  type: AnalysisFieldType;
  description: string;
  /** The allowed values of an `enum` field. */
  enum?: readonly string[];
}

/** A field's value: dates `YYYY-MM-DD`, times `HH:MM`, phones E.164; null when the call did not say it. */
export type FieldValue = string | number | boolean | null;

export interface CallSentiment {
  overall: "positive" | "neutral" | "negative";
  /** 0 (most negative) to 1 (most positive); 0.5 is neutral. */
  score: number;
}

/**
 * Where the analysis came from: the deterministic reading of the conversation (`rules`), a
 * model (`llm`), or the deterministic reading because the model's failed (`rules_fallback`,
 * with `fallback_reason`).
 */
export type AnalysisSource = "rules" | "llm" | "rules_fallback";

export interface CallAnalysis {
  source: AnalysisSource;
  summary: string;
  outcome: CallOutcome;
  success: boolean;
  sentiment: CallSentiment;
  /** The booked appointment's details (when one was booked), a callback's time, and every declared field (null when not read). */
  extracted_data: Record<string, FieldValue>;
  fallback_reason?: string;
}

/** Everything a call's analysis reads. */
export interface AnalysisInput {
  transcript: readonly TranscriptSegment[];
  actions: readonly CallAction[];
  /** Why the call ended; null when it is not known (a call recovered after a crash). */
  endReason: CallEndReason | null;
  /** The call ended `transferred`. */
  transferred: boolean;
  durationSeconds: number;
  direction: "outbound" | "inbound" | "web";
  /** The other party's number (whom an outbound call dialled, who called in); null on web calls. */
  farEndNumber: string | null;
  agentName: string;
  fields: readonly AnalysisField[];
  /** When the call started: relative days the caller said ("tuesday") are read from it ... */
  startedAt: Date;
  /** ... in this IANA zone (the agent's `metadata.timezone`, default UTC). */
  timeZone: string;
}
