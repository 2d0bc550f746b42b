import { STOP_WORD_SET } from "./stop-words.js";
import type { Utterance } from "./utterance.js";
import { toUtterance } from "./utterance.js";
import { wordsMatch } from "./word-match.js";

/** One entry of the agent's `metadata.faq`. */
export interface FaqEntry {
  question: string;
  answer: string;
}

/** FAQ entries with their questions reduced to topic words, built once per call. */
export interface FaqIndex {
  readonly entries: readonly { entry: FaqEntry; topics: readonly string[] }[];
}

/**
 * How much of the two word sets must overlap (Dice coefficient, 2|A∩B| / (|A|+|B|)): one
 * topic word of a three-word question is enough ("parking?" for "Is there parking near the
 * office?"); an unrelated sentence that shares one word with a long question is not.
 */
const MIN_SCORE = 0.5;

export function buildFaqIndex(entries: readonly FaqEntry[]): FaqIndex {
  return { entries: entries.map((entry) => ({ entry, topics: topicWords(toUtterance(entry.question)) })) };
}

/** The entry whose question best matches the caller's words, or null below the threshold. */
export function matchFaq(index: FaqIndex, utterance: Utterance): FaqEntry | null {
  const said = topicWords(utterance);
  if (said.length === 0) return null;
  let best: FaqEntry | null = null;
  let bestScore = MIN_SCORE;
  for (const { entry, topics } of index.entries) {
    if (topics.length === 0) continue;
    const shared = topics.filter((t) => said.some((s) => wordsMatch(s, t))).length;
    const score = (2 * shared) / (topics.length + said.length);
    if (shared > 0 && score >= bestScore && (best === null || score > bestScore)) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}

function topicWords(utterance: Utterance): string[] {
  return [...new Set(utterance.words.filter((w) => !STOP_WORD_SET.has(w)))];
}
