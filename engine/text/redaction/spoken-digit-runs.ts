import { DIGIT_WORDS } from "../spoken-digits.js";
import { gapBetween, type TextToken } from "./text-tokens.js";

/**
 * Runs of digits as a caller says them, with where they are in the text: `digitRuns` in
 * ../spoken-digits.ts with positions, and a few more ways of saying digits that people use for
 * long numbers ("four fifteen", "forty one eleven", "one eight hundred").
 *
 * A run goes on across spaces, a dash, a dot, a comma or brackets ("(415) 555-0199",
 * "four one five, five five five") or a hesitation ("four five three two uh one one ..."), not
 * across a line break, a slash or any other word.
 */
export interface DigitRun {
  /** The digits, without the "+". */
  digits: string;
  /** Said after "plus" or written after "+": an international phone number. */
  plus: boolean;
  /** Index of the first and just past the last token of the run. */
  firstToken: number;
  endToken: number;
  /** Character offsets, an opening bracket or "+" before the first digit included. */
  start: number;
  end: number;
}

const TEENS: Readonly<Record<string, string>> = {
  ten: "10", eleven: "11", twelve: "12", thirteen: "13", fourteen: "14", fifteen: "15",
  sixteen: "16", seventeen: "17", eighteen: "18", nineteen: "19",
};
const TENS: Readonly<Record<string, string>> = {
  twenty: "2", thirty: "3", forty: "4", fifty: "5", sixty: "6", seventy: "7", eighty: "8", ninety: "9",
};
const UNIT_WORDS = new Set(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]);
const FILLERS = new Set(["uh", "um", "er", "erm", "ah", "hmm", "uhm"]);
/** What may stand between two groups of one number. */
const GROUP_GAP = /^[ \t]*[,.\-\u2013()]?[ \t]*[(]?[ \t]*$/;

export function spokenDigitRuns(text: string, tokens: readonly TextToken[], minDigits = 1): DigitRun[] {
  const runs: DigitRun[] = [];
  let i = 0;
  while (i < tokens.length) {
    const run = readRun(text, tokens, i);
    if (!run) {
      i += 1;
      continue;
    }
    if (run.digits.length >= minDigits) runs.push(run);
    i = run.endToken;
  }
  return runs;
}

function readRun(text: string, tokens: readonly TextToken[], from: number): DigitRun | null {
  let i = from;
  let plus = false;
  if (tokens[i]!.word === "plus" && i + 1 < tokens.length && joined(text, tokens, i)) {
    plus = true;
    i += 1;
  }
  let digits = "";
  let repeat = 1;
  let last = -1;
  while (i < tokens.length) {
    if (last >= 0 && !joined(text, tokens, i - 1)) break;
    const word = tokens[i]!.word;
    // "four five three two uh one one ...": a hesitation does not end the number.
    if (last >= 0 && FILLERS.has(word) && i + 1 < tokens.length && joined(text, tokens, i) && readDigits(tokens, i + 1, digits)) {
      i += 1;
      continue;
    }
    if (word === "double" || word === "triple") {
      if (i + 1 >= tokens.length || DIGIT_WORDS[tokens[i + 1]!.word] === undefined) break;
      repeat = word === "double" ? 2 : 3;
      i += 1;
      continue;
    }
    const read = readDigits(tokens, i, digits);
    if (!read) break;
    digits += read.digits.repeat(repeat);
    repeat = 1;
    i = read.next;
    last = i;
  }
  if (last < 0) return null;
  const first = tokens[plus ? from + 1 : from]!;
  let start = plus ? tokens[from]!.start : first.start;
  // "+1 415 ..." and "(415) 555 ...": the sign and the bracket belong to the number.
  while (start > 0 && (text[start - 1] === "+" || text[start - 1] === "(")) {
    if (text[start - 1] === "+") plus = true;
    start -= 1;
  }
  return { digits, plus, firstToken: from, endToken: last, start, end: tokens[last - 1]!.end };
}

/** The digits one word (or a tens word and its unit) stands for. */
function readDigits(tokens: readonly TextToken[], i: number, before: string): { digits: string; next: number } | null {
  const word = tokens[i]!.word;
  if (/^[0-9]+$/.test(word)) return { digits: word, next: i + 1 };
  const digit = DIGIT_WORDS[word];
  if (digit !== undefined) return { digits: digit, next: i + 1 };
  const teen = TEENS[word];
  if (teen !== undefined) return { digits: teen, next: i + 1 };
  const tens = TENS[word];
  if (tens !== undefined) {
    const unit = tokens[i + 1]?.word;
    if (unit !== undefined && UNIT_WORDS.has(unit)) return { digits: tens + DIGIT_WORDS[unit]!, next: i + 2 };
    return { digits: `${tens}0`, next: i + 1 };
  }
  // "one eight hundred": "hundred" after a single digit is two zeros.
  if (word === "hundred" && before !== "" && i > 0 && DIGIT_WORDS[tokens[i - 1]!.word] !== undefined) return { digits: "00", next: i + 1 };
  return null;
}

/** Whether token `i` and the next one belong to one number. */
function joined(text: string, tokens: readonly TextToken[], i: number): boolean {
  const next = tokens[i + 1];
  return next !== undefined && GROUP_GAP.test(gapBetween(text, tokens[i]!, next));
}
