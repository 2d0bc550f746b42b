import vader from "vader-sentiment";
import type { TranscriptSegment } from "../call-events.js";
import type { CallSentiment } from "./call-analysis.js";

/** VADER's own thresholds on the compound score for positive and negative text. */
const POSITIVE_AT = 0.05;
const NEGATIVE_AT = -0.05;

/**
 * The caller's sentiment over the call, from VADER (a lexicon and rules made for short,
 * informal text, kept by its authors): the mean compound score of the caller's turns, mapped
 * from -1..1 to a `score` of 0..1, and `overall` by VADER's thresholds (±0.05). A call in
 * which the caller said nothing is neutral (0.5).
 */
export function callerSentiment(transcript: readonly TranscriptSegment[]): CallSentiment {
  const turns = transcript.filter((s) => s.role === "user" && s.content.trim() !== "");
  if (turns.length === 0) return { overall: "neutral", score: 0.5 };
  const mean = turns.reduce((sum, s) => sum + vader.SentimentIntensityAnalyzer.polarity_scores(s.content).compound, 0) / turns.length;
  return {
    overall: mean >= POSITIVE_AT ? "positive" : mean <= NEGATIVE_AT ? "negative" : "neutral",
    score: Math.round(((mean + 1) / 2) * 100) / 100,
  };
}
