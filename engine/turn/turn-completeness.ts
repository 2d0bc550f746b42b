/**
 * What the words of the caller's turn so far say about it: `complete` (a reply can start
 * after a short pause), `incomplete` (they have more to say: wait up to the longest wait) or
 * `unknown` (wait a moment longer than for a complete turn).
 */
export const TURN_COMPLETENESS = ["complete", "incomplete", "unknown"] as const;
export type TurnCompleteness = (typeof TURN_COMPLETENESS)[number];

/** What a recognizer makes of a hesitation. */
const HESITATIONS: ReadonlySet<string> = new Set(["um", "umm", "uh", "uhm", "er", "erm", "hmm", "mm", "ah"]);

/**
 * Words that leave a sentence open when it ends on them: conjunctions, prepositions, articles,
 * possessives and subject pronouns waiting for their verb ("I'd like to come in on ...", "a
 * cleaning and ...", "and then I ..."). Words that often close a short answer ("that", "it",
 * "you", "then", "so") are not among them.
 */
const OPEN_ENDINGS: ReadonlySet<string> = new Set([
  "and", "or", "but", "because", "if", "than", "which", "who", "when", "while", "where",
  "on", "at", "in", "for", "to", "with", "from", "of", "by", "about", "around", "after", "before", "until", "between",
  "a", "an", "the", "some", "any", "another", "every",
  "my", "your", "our", "their", "his",
  "i", "we", "they", "he", "she", "i'd", "we'd", "i'll", "we'll", "i'm", "we're", "it's", "there's",
  "like", "need", "want", "maybe", "just", "also", "really", "very",
]);

/**
 * Verbs that close a short answer after a pronoun ("yes it is", "I do", "we can") but leave a
 * sentence open after a noun ("my name is ...", "the best day would be ...").
 */
const AUXILIARIES: ReadonlySet<string> = new Set(["is", "are", "was", "were", "be", "am", "do", "does", "did", "have", "has", "can", "could", "will", "would", "should"]);
const PRONOUNS: ReadonlySet<string> = new Set(["i", "you", "we", "they", "he", "she", "it", "that", "there", "this"]);

function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z' -]/g, " ")
    .split(/[\s-]+/)
    .filter(Boolean);
}

/** The caller's words end open: on a hesitation or a word that needs more after it; or there are none. */
export function endsOpen(text: string): boolean {
  const all = words(text);
  const last = all.at(-1);
  if (last === undefined || HESITATIONS.has(last) || OPEN_ENDINGS.has(last)) return true;
  return AUXILIARIES.has(last) && !PRONOUNS.has(all.at(-2) ?? "");
}

/**
 * A judgement from the transcript alone, for dialogues that have no view of their own (a
 * remote model): open endings are incomplete, a sentence a punctuating recognizer closed
 * with `.`, `?` or `!` is complete, anything else unknown.
 */
export function transcriptCompleteness(text: string): TurnCompleteness {
  if (endsOpen(text)) return "incomplete";
  return /[.?!]["')\]]?\s*$/.test(text) ? "complete" : "unknown";
}
