import type { CallAction, TranscriptSegment } from "../call-events.js";
import { readCallFacts } from "./call-facts.js";

/** The caller's last words quoted to the person at most this long: a briefing, not a replay. */
const MAX_QUOTE_CHARS = 240;

/** What a briefing is made from: the call so far. */
export interface BriefingInput {
  agentName: string;
  /** The business the agent speaks for (`metadata.business_name`), when it has one. */
  businessName: string | null;
  transcript: readonly TranscriptSegment[];
  actions: readonly CallAction[];
}

/**
 * What the agent tells the person a call is warm-transferred to, before the caller is put
 * through: who is calling on whose behalf, what the call has done so far (from the agent's
 * actions, as the call's analysis reads them) and the caller's last words. Short, and made to
 * be spoken: no numbers read as digits strings, no lists.
 */
export function transferBriefing(input: BriefingInput): string {
  const from = input.businessName ? ` from ${input.businessName}` : "";
  const sentences = [`Hello, this is ${input.agentName}${from}, with a caller for you.`];
  // The transfer itself is not news to the person taking it.
  const facts = readCallFacts({ actions: input.actions.filter((a) => a.type !== "transfer"), endReason: null, transferred: false, farEndNumber: null });
  if (facts.outcome === "appointment_booked") sentences.push("They booked an appointment on this call.");
  else if (facts.outcome === "callback_requested") sentences.push("They asked to be called back.");
  else if (facts.answered.length > 0) sentences.push(`I answered their question: ${facts.answered.at(-1)!.replace(/[?.!]+$/, "").toLowerCase()}.`);
  const said = lastWords(input.transcript);
  if (said) sentences.push(`They said: ${said}.`);
  sentences.push("I am connecting you now.");
  return sentences.join(" ");
}

/** The caller's last turns, newest last, up to MAX_QUOTE_CHARS (cut at a word). */
function lastWords(transcript: readonly TranscriptSegment[]): string {
  const turns = transcript.filter((s) => s.role === "user" && !s.content.startsWith("[pressed")).map((s) => s.content.trim().replace(/[.!?]+$/, ""));
  let quoted = "";
  for (const turn of turns.reverse()) {
    const longer = quoted ? `${turn}, ${quoted}` : turn;
    if (longer.length > MAX_QUOTE_CHARS) return quoted || turn.slice(0, MAX_QUOTE_CHARS).replace(/\s+\S*$/, "");
    quoted = longer;
  }
  return quoted;
}
