/**
 * Words of a text with their character offsets, for finding sensitive spans in what a speech
 * recognizer or a chat model wrote. Words are lower-case; a run of digits is one word and keeps
 * an ordinal suffix ("3rd", "21st"); "d.o.b." is three words.
 */
export interface TextToken {
  /** The word, lower-case: "four", "4155", "3rd", "it's". */
  word: string;
  /** Offset of the first character in the text. */
  start: number;
  /** Offset just past the last character. */
  end: number;
}

const WORD = /[0-9]+(?:st|nd|rd|th)?(?![\p{L}])|[0-9]+|\p{L}+(?:['\u2019]\p{L}+)*/gu;

export function tokenize(text: string): TextToken[] {
  const lower = lowerSameLength(text);
  const tokens: TextToken[] = [];
  for (const match of lower.matchAll(WORD)) {
    tokens.push({ word: match[0], start: match.index, end: match.index + match[0].length });
  }
  return tokens;
}

/** The text between two tokens (punctuation and spaces). */
export function gapBetween(text: string, before: TextToken, after: TextToken): string {
  return text.slice(before.end, after.start);
}

/**
 * Lower case without changing any offset: a character whose lower case is longer ("İ") stays
 * as it is, so spans found in the lower-case text are spans of the original.
 */
export function lowerSameLength(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = "";
  for (const char of text) {
    const l = char.toLowerCase();
    out += l.length === char.length ? l : char;
  }
  return out;
}
