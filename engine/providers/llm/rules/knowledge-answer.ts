import type { KnowledgePassage } from "../../../tools.js";
import { topicWords } from "./topic-match.js";
import { toUtterance, type Utterance } from "./utterance.js";
import { wordsMatch } from "./word-match.js";

/**
 * Share of the question's topic words a passage must hold to answer it: "are you open on
 * saturdays" needs both "open" and "saturdays"; a passage about Saturday deliveries is no
 * answer to "do you deliver pizza on saturdays" (one of three).
 */
const MIN_COVERAGE = 0.5;
/** An answer read out: one or two sentences, not a whole page. */
const MAX_ANSWER_CHARS = 300;

/** What the `rules` agent says from the agent's documents. */
export interface KnowledgeAnswer {
  text: string;
  /** The passage it came from. */
  passage: KnowledgePassage;
}

/**
 * The sentence of the passages (best first, as the search ranked them) that best answers the
 * question: the one sharing most of its topic words, taken from the first passage that covers
 * at least MIN_COVERAGE of them; null when none does (the agent then says it does not know).
 */
export function answerFromPassages(question: Utterance, passages: readonly KnowledgePassage[]): KnowledgeAnswer | null {
  const asked = topicWords(question);
  if (asked.length === 0) return null;
  const covered = (words: readonly string[]) => asked.filter((topic) => words.some((word) => wordsMatch(word, topic))).length;
  for (const passage of passages) {
    if (covered(toUtterance(passage.text).words) / asked.length < MIN_COVERAGE) continue;
    let best: { text: string; shared: number } | null = null;
    // A heading ("Opening hours") shares the question's words but answers nothing: whole sentences first.
    const all = sentences(passage.text);
    const whole = all.filter((s) => /[.!?]$/.test(s));
    for (const sentence of whole.length > 0 ? whole : all) {
      const shared = covered(toUtterance(sentence).words);
      if (shared > 0 && (best === null || shared > best.shared)) best = { text: sentence, shared };
    }
    if (best) return { text: best.text.length > MAX_ANSWER_CHARS ? `${best.text.slice(0, best.text.lastIndexOf(" ", MAX_ANSWER_CHARS))}.` : best.text, passage };
  }
  return null;
}

/** A passage's sentences: cut after ., ! or ? and at line breaks (headings, list items). */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}
