import { bestTopicMatch, topicWords, type TopicEntry } from "./topic-match.js";
import { toUtterance, type Utterance } from "./utterance.js";

/** One entry of the agent's `metadata.faq`. */
export interface FaqEntry {
  question: string;
  answer: string;
}

/** FAQ entries with their questions reduced to topic words, built once per call. */
export interface FaqIndex {
  readonly entries: readonly TopicEntry<FaqEntry>[];
}

export function buildFaqIndex(entries: readonly FaqEntry[]): FaqIndex {
  return { entries: entries.map((entry) => ({ item: entry, topics: topicWords(toUtterance(entry.question)) })) };
}

/** The entry whose question best matches the caller's words, or null below the threshold (see bestTopicMatch). */
export function matchFaq(index: FaqIndex, utterance: Utterance): FaqEntry | null {
  return bestTopicMatch(index.entries, utterance);
}
