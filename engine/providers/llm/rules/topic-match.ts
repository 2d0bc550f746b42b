import { STOP_WORD_SET } from "./stop-words.js";
import type { Utterance } from "./utterance.js";
import { wordsMatch } from "./word-match.js";

/** Something the caller may be asking about (an FAQ question, an intent's example), as its topic words. */
export interface TopicEntry<T> {
  readonly item: T;
  readonly topics: readonly string[];
}

/**
 * How much of the two word sets must overlap (Dice coefficient, 2|A∩B| / (|A|+|B|)): one
 * topic word of a three-word question is enough ("parking?" for "Is there parking near the
 * office?"); an unrelated sentence that shares one word with a long question is not.
 */
const MIN_SCORE = 0.5;

/** The words of an utterance that carry its topic: every word but the stop words, once each. */
export function topicWords(utterance: Utterance): string[] {
  return [...new Set(utterance.words.filter((w) => !STOP_WORD_SET.has(w)))];
}

/** The item whose topic words best overlap the caller's, or null below the threshold (the first of equals wins). */
export function bestTopicMatch<T>(entries: readonly TopicEntry<T>[], utterance: Utterance): T | null {
  const said = topicWords(utterance);
  if (said.length === 0) return null;
  let best: T | null = null;
  let bestScore = MIN_SCORE;
  for (const { item, topics } of entries) {
    if (topics.length === 0) continue;
    const shared = topics.filter((t) => said.some((s) => wordsMatch(s, t))).length;
    const score = (2 * shared) / (topics.length + said.length);
    if (shared > 0 && score >= bestScore && (best === null || score > bestScore)) {
      best = item;
      bestScore = score;
    }
  }
  return best;
}
