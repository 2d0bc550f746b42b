import { findPhoneNumbersInText, parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js";
import { isoDate, isoTime } from "../providers/llm/rules/calendar.js";
import { yesOrNo } from "../providers/llm/rules/caller-intents.js";
import { findDateTime } from "../providers/llm/rules/date-time-extraction.js";
import { similarWords } from "../providers/llm/rules/similar-words.js";
import { stem } from "../providers/llm/rules/word-stem.js";
import { hasAnyPhrase, toUtterance, type Utterance } from "../providers/llm/rules/utterance.js";
import type { WallClock } from "../providers/llm/rules/wall-clock.js";
import { normalizeNumberWords } from "../text/number-words.js";
import { digitRuns } from "../text/spoken-digits.js";
import type { AnalysisField, FieldValue } from "./call-analysis.js";

// Typed readers of one caller turn: each returns the value the words clearly say, or null.
// They read recognizer output ("john at gmail dot com", "four one five ...") as well as
// punctuated text from recognizers that write it ("john@gmail.com", "(415) 555-0199").

/** What a reading needs besides the words. */
export interface ValueContext {
  /** The business's wall clock when the call started: "tuesday" is the Tuesday after it. */
  clock: WallClock;
  /** The country of numbers said without a country code (the far end's, else US). */
  defaultCountry: CountryCode;
  /** The turn answers the agent's question about the field (a bare "yes" or "blue cross" is the answer). */
  answering: boolean;
  /** The field's name words, stemmed (see `fieldWords`): a turn that names the field has its value after them. */
  fieldWords: readonly string[];
}

/** The value of `field` in one caller turn, or null. */
export function readValue(field: AnalysisField, text: string, context: ValueContext): FieldValue {
  const utterance = toUtterance(text);
  switch (field.type) {
    case "date": {
      const { date } = findDateTime(utterance.text, context.clock, { timeExpected: false });
      return date ? isoDate(date) : null;
    }
    case "time": {
      const { time } = findDateTime(utterance.text, context.clock, { timeExpected: true });
      return time ? isoTime(time) : null;
    }
    case "number":
      return readNumber(text);
    case "email":
      return readEmail(text);
    case "phone":
      return readPhone(text, context.defaultCountry);
    case "boolean":
      return readBoolean(utterance, context.answering);
    case "enum":
      return readEnum(utterance, field.enum ?? []);
    case "string":
      return readString(utterance, context);
  }
}

/** The one number said ("three of us" -> 3, "2.5", "1,200"); null when none, or several different ones. */
export function readNumber(text: string): number | null {
  const found = normalizeNumberWords(text.toLowerCase().replace(/(\d),(?=\d{3}\b)/g, "$1")).match(/(?<![\d:.])\d+(?:\.\d+)?(?![\d:])/g) ?? [];
  const values = new Set(found.map(Number));
  return values.size === 1 ? [...values][0]! : null;
}

const SPOKEN_SYMBOLS: Readonly<Record<string, string>> = { dot: ".", period: ".", underscore: "_", dash: "-", hyphen: "-" };
const EMAIL = /^[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$/;
const WRITTEN_EMAIL = /[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/g;
/** Words right before a spoken address: "my email is ...", "email me at ...". */
const ADDRESS_CUES = new Set(["is", "email", "mail", "address", "me", "to", "at"]);

/**
 * An email address written ("john.smith@example.com") or spoken ("john at gmail dot com",
 * "j o h n at gmail dot com", "john dot smith at ..."). A spoken address is taken only when
 * its local part (one word, letters spelled out, or parts joined by "dot", "underscore",
 * "dash") follows a cue such as "is": "john smith at yahoo dot com" could be johnsmith@ or
 * smith@, and is not guessed. Null when none, or several different ones.
 */
export function readEmail(text: string): string | null {
  const written = new Set(text.toLowerCase().match(WRITTEN_EMAIL) ?? []);
  if (written.size > 0) return written.size === 1 ? [...written][0]! : null;
  const words = toUtterance(text).words;
  const at = words.lastIndexOf("at");
  if (at <= 0 || at === words.length - 1) return null;
  let start = at - 1;
  for (;;) {
    const before = words[start - 1];
    if (before !== undefined && SPOKEN_SYMBOLS[before] !== undefined && start >= 2) start -= 2;
    else if (before !== undefined && before.length === 1 && words[start]!.length === 1) start -= 1;
    else break;
  }
  if (start > 0 && !ADDRESS_CUES.has(words[start - 1]!)) return null;
  let domain = words[at + 1]!;
  for (let i = at + 2; SPOKEN_SYMBOLS[words[i] ?? ""] === "." && words[i + 1] !== undefined; i += 2) domain += `.${words[i + 1]}`;
  const local = words
    .slice(start, at)
    .map((w) => SPOKEN_SYMBOLS[w] ?? w)
    .join("");
  const address = `${local}@${domain}`;
  return EMAIL.test(address) ? address : null;
}

/**
 * A phone number written ("(415) 555-0199", "+44 20 7946 0958") or said digit by digit ("four
 * one five five five five zero one nine nine", "double five", "oh"), as E.164; it must be a
 * valid number of `defaultCountry` or carry its own country code. Null when none, or several
 * different ones.
 */
export function readPhone(text: string, defaultCountry: CountryCode): string | null {
  const found = new Set(findPhoneNumbersInText(text, defaultCountry).map((m) => m.number.number as string));
  for (const run of digitRuns(toUtterance(text).words)) {
    const parsed = parsePhoneNumberFromString(run, defaultCountry);
    if (parsed?.isValid()) found.add(parsed.number);
  }
  return found.size === 1 ? [...found][0]! : null;
}

const NEGATIONS = ["not", "no", "never", "do not", "does not", "did not", "is not", "am not", "cannot", "have not", "has not", "nope"] as const;

/**
 * An answer to the field's question reads as yes or no ("yes please", "no it's not"); a turn
 * that names the field ("i'm a new patient") is true unless it is negated ("i'm not a new
 * patient").
 */
export function readBoolean(utterance: Utterance, answering: boolean): boolean | null {
  if (answering) {
    const answer = yesOrNo(utterance);
    if (answer) return answer === "yes";
  }
  return hasAnyPhrase(utterance, NEGATIONS) ? false : answering ? null : true;
}

/** The one allowed value named (each of its words said, small recognizer errors forgiven); null when none or several. */
export function readEnum(utterance: Utterance, values: readonly string[]): string | null {
  const named = values.filter((value) => {
    const words = toUtterance(value).words;
    return words.length > 0 && words.every((w) => utterance.words.some((said) => said === w || similarWords(said, w) || said === `${w}s`));
  });
  // "cleaning" and "deep cleaning" both named: the longer, more specific value.
  const specific = named.filter((v) => !named.some((other) => other !== v && other.toLowerCase().includes(v.toLowerCase())));
  return specific.length === 1 ? specific[0]! : null;
}

const ANSWER_OPENINGS = /^(?:(?:well|um|uh|so|oh|yes|yeah|no|it is|it was|that is|that would be|i think|i guess)\s+)+/;

/**
 * Free text: a turn that names the field gives what follows its words ("my insurance provider
 * is blue cross" -> "blue cross"); an answer to the field's question is the answer itself,
 * without openings such as "it is". At most 200 characters; null when nothing is left.
 */
export function readString(utterance: Utterance, context: ValueContext): string | null {
  const words = utterance.words;
  const last = words.findLastIndex((w) => context.fieldWords.includes(stem(w)));
  let value: string;
  if (last >= 0) {
    const rest = words.slice(last + 1);
    value = (["is", "are", "was", "will"].includes(rest[0] ?? "") ? rest.slice(rest[0] === "will" && rest[1] === "be" ? 2 : 1) : rest).join(" ");
  } else if (context.answering) {
    value = utterance.text.replace(ANSWER_OPENINGS, "");
  } else {
    return null;
  }
  value = value.trim().slice(0, 200);
  return value === "" ? null : value;
}
