/**
 * A caller's words as the rules engine reads them: lower-case, no punctuation, recognizer
 * markers ("<sil>", "[noise]", "++breath++") removed and contractions spelled out ("it's" ->
 * "it is", "thats" -> "that is"), so that phrase lists need one spelling only. Works the same
 * for pocketsphinx output and for recognizers that punctuate and capitalise.
 */
export interface Utterance {
  /** Words joined by single spaces. */
  readonly text: string;
  readonly words: readonly string[];
  /** `text` with a space at each end, for whole-word phrase search. */
  readonly padded: string;
}

const MARKERS = /<[^>]*>|\[[^\]]*\]|\+\+[^+]*\+\+/g;

/** Spellings with and without the apostrophe: recognizers write either. */
const CONTRACTIONS: Readonly<Record<string, string>> = {
  "i'm": "i am",
  im: "i am",
  "it's": "it is",
  its: "it is",
  "that's": "that is",
  thats: "that is",
  "what's": "what is",
  whats: "what is",
  "name's": "name is",
  "i'd": "i would",
  "i'll": "i will",
  "i've": "i have",
  "you've": "you have",
  "we've": "we have",
  "you'll": "you will",
  "we'll": "we will",
  "don't": "do not",
  dont: "do not",
  "doesn't": "does not",
  "can't": "cannot",
  cant: "cannot",
  "won't": "will not",
  "you're": "you are",
  "we're": "we are",
  "let's": "let us",
  "there's": "there is",
  "who's": "who is",
  "isn't": "is not",
  "didn't": "did not",
  didnt: "did not",
};

export function toUtterance(raw: string): Utterance {
  const cleaned = raw
    .toLowerCase()
    .replace(MARKERS, " ")
    .replace(/[’‘]/g, "'")
    // Keep apostrophes inside words and colons inside clock times ("3:30"); drop the rest.
    .replace(/(\d):(?=\d)/g, "$1\u0000")
    .replace(/[^\p{L}\p{N}'\u0000]+/gu, " ")
    .replace(/\u0000/g, ":")
    .replace(/(^|\s)'+|'+(?=\s|$)/g, "$1");
  const words = cleaned
    .split(/\s+/)
    .filter((w) => w !== "")
    .flatMap((w) => (CONTRACTIONS[w] ?? w).split(" "));
  const text = words.join(" ");
  return { text, words, padded: ` ${text} ` };
}

/** Whether the words contain `phrase` (space-separated words) as a whole-word sequence. */
export function hasPhrase(utterance: Utterance, phrase: string): boolean {
  return utterance.padded.includes(` ${phrase} `);
}

export function hasAnyPhrase(utterance: Utterance, phrases: readonly string[]): boolean {
  return phrases.some((p) => hasPhrase(utterance, p));
}
