import { gapBetween, lowerSameLength, type TextToken } from "./text-tokens.js";

/**
 * Email addresses, written ("a.b@example.com") or as a recognizer writes them when they are
 * spelled out ("john dot smith at example dot com", "j underscore doe at mail dot co dot uk").
 *
 * A spoken address is "at" followed by a domain of at least two parts joined by "dot" (or a
 * written "."), the last part being letters. The part before "at" is the word before it and
 * everything joined to it by "dot", "underscore", "dash" or digits; one more word is taken when
 * it is not a common word ("john smith at ..." hides both names).
 */
export function emailSpans(text: string, tokens: readonly TextToken[]): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  for (const match of lowerSameLength(text).matchAll(WRITTEN)) spans.push({ start: match.index, end: match.index + match[0].length });
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i]!.word !== "at") continue;
    let domainStart = i + 1;
    if (tokens[domainStart]?.word === "sign" || tokens[domainStart]?.word === "symbol") domainStart += 1;
    const domainEnd = readDomain(text, tokens, domainStart);
    if (domainEnd === null) continue;
    const localStart = readLocalPart(text, tokens, i - 1);
    if (localStart === null) continue;
    spans.push({ start: tokens[localStart]!.start, end: tokens[domainEnd - 1]!.end });
    i = domainEnd - 1;
  }
  return spans;
}

const WRITTEN = /[\p{L}0-9._%+-]+@[\p{L}0-9-]+(?:\.[\p{L}0-9-]+)*\.\p{L}{2,}/gu;
const DOT_WORDS = new Set(["dot", "period", "point"]);
const JOIN_WORDS = new Set(["dot", "period", "underscore", "dash", "hyphen", "minus"]);
/** Words that come before an address rather than in it. */
const NOT_A_NAME = new Set([
  "a", "about", "address", "an", "and", "any", "at", "be", "by", "can", "contact", "could", "e", "email", "emails", "for",
  "from", "got", "have", "i", "i'm", "im", "in", "is", "it", "it's", "its", "just", "mail", "me", "my", "no", "of", "okay",
  "on", "or", "our", "reach", "s", "send", "so", "sure", "that", "that's", "thats", "the", "them", "to", "uh", "um", "us",
  "was", "we", "well", "write", "yeah", "yes", "you", "your",
]);

/** Index just past the domain starting at `from` ("example dot com"), or null. */
function readDomain(text: string, tokens: readonly TextToken[], from: number): number | null {
  let i = from;
  let parts = 0;
  let lastWasLetters = false;
  while (i < tokens.length && /^[\p{L}0-9]+$/u.test(tokens[i]!.word) && !DOT_WORDS.has(tokens[i]!.word)) {
    parts += 1;
    lastWasLetters = /^\p{L}+$/u.test(tokens[i]!.word);
    const next = tokens[i + 1];
    if (next === undefined) break;
    const gap = gapBetween(text, tokens[i]!, next);
    if (gap === "." || gap === "-") {
      i += 1;
    } else if (/^\s+$/.test(gap) && JOIN_WORDS.has(next.word) && next.word !== "underscore" && tokens[i + 2] !== undefined) {
      i += 2;
    } else {
      break;
    }
  }
  if (parts < 2 || !lastWasLetters || !isTopLevelDomain(tokens[i]!.word)) return null;
  const end = Math.min(i + 1, tokens.length);
  // Stop after the last part that was read (a trailing "dot" that leads nowhere is left out).
  return /^[\p{L}0-9]+$/u.test(tokens[end - 1]!.word) && !JOIN_WORDS.has(tokens[end - 1]!.word) ? end : null;
}

/** Digits, written or said ("smith eighty five" is "smith85"). */
function isNumber(word: string): boolean {
  return /^[0-9]+$/.test(word) || NUMBER_WORDS.has(word);
}

const NUMBER_WORDS = new Set([
  "zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
  "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty",
  "seventy", "eighty", "ninety", "hundred",
]);

/** "com", "uk", "info": a sentence that says "the dot matrix" is not an address. */
function isTopLevelDomain(word: string): boolean {
  return /^\p{L}{2,3}$/u.test(word) || LONG_TLDS.has(word);
}

const LONG_TLDS = new Set(["info", "mobi", "name", "email", "online", "site", "tech", "store", "cloud", "life", "shop", "blog"]);

/** Index of the first token of the address's user part, which ends at token `last`, or null. */
function readLocalPart(text: string, tokens: readonly TextToken[], last: number): number | null {
  const isPart = (word: string) => /^[\p{L}0-9]+$/u.test(word) && !JOIN_WORDS.has(word);
  if (!isPart(tokens[last]!.word) || (NOT_A_NAME.has(tokens[last]!.word) && tokens[last]!.word.length > 1)) return null;
  let first = last;
  while (first > 0) {
    const before = tokens[first - 1]!;
    const gap = gapBetween(text, before, tokens[first]!);
    if ((gap === "." || gap === "_" || gap === "-") && isPart(before.word)) {
      first -= 1;
    } else if (JOIN_WORDS.has(before.word) && first >= 2 && isPart(tokens[first - 2]!.word)) {
      first -= 2;
    } else if (/^\s+$/.test(gap) && tokens[first]!.word.length === 1 && before.word.length === 1 && /^\p{L}$/u.test(before.word)) {
      // Spelled out: "s m i t h j at ...".
      first -= 1;
    } else if (/^\s+$/.test(gap) && (isNumber(tokens[first]!.word) || isNumber(before.word))) {
      if (!/^[\p{L}0-9]+$/u.test(before.word) || NOT_A_NAME.has(before.word)) break;
      first -= 1;
    } else {
      break;
    }
  }
  // "john smith at ...": one more name, when the word before is not a common word.
  const before = tokens[first - 1];
  if (before && /^\s+$/.test(gapBetween(text, before, tokens[first]!)) && isPart(before.word) && !NOT_A_NAME.has(before.word) && !isNumber(before.word)) {
    first -= 1;
  }
  return first;
}
