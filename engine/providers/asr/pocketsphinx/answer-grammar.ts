import type { ExpectedSpeech } from "../expected-speech.js";
import { COMMON_FIRST_NAMES, COMMON_SURNAMES } from "./common-names.js";

/**
 * Words a caller wraps an answer in: frequent English words, greetings and hesitations, and the
 * verbs of asking for an appointment. Chosen as a class (not from any evaluation's phrasings):
 * the answer's own words are what the grammar is for, these only carry it.
 */
const CARRIER_WORDS = `
a an the to for of at on in is it it's that that's this i i'd i'm me my you your we
can could would will like want need have get do does please thanks thank hi hello um uh so well okay oh
yes yeah sure maybe just how about what book make schedule appointment calling good works fine great
`.trim().split(/\s+/);
/** At most this many carrier words before the answer, and after it: a grammar must not become a word loop. */
const LEADING_CARRIERS = 6;
const TRAILING_CARRIERS = 3;
/**
 * Around a name, only what callers say before and after one ("oh sure, it's jane, thanks"):
 * with the wide carriers, "it is david brown" came out "to to the david brown", which names
 * nobody.
 */
const NAME_LEAD = ["yes", "yeah", "sure", "okay", "um", "uh", "so", "well", "oh", "hi", "sorry"];
const NAME_TAIL = ["please", "thanks", "thank you"];

const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const ORDINALS = [
  "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth",
  "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth",
  ...["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"].map((o) => `twenty ${o}`),
  "thirtieth", "thirty first",
];
const HOURS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
const MINUTES = ["o'clock", "oh five", "fifteen", "twenty", "thirty", "forty", "forty five", "fifty"];
const DAY_PARTS = ["in the morning", "in the afternoon", "in the evening", "a m", "p m"];
const YES_NO = [
  "yes", "yeah", "yep", "yup", "sure", "correct", "right", "that's right", "that is right", "that's correct", "that is correct",
  "absolutely", "of course", "okay", "no", "nope", "not really", "no thanks", "no thank you",
];
const NAME_CUES = ["my name is", "the name is", "name is", "this is", "it is", "it's", "i am", "i'm", "call me"];

/** A caller's words as the recognizer writes them: lower case, letters and apostrophes. */
function phrase(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}'\s-]+/gu, " ")
    .replace(/-/g, " ")
    .trim()
    .split(/\s+/)
    .filter((word) => word !== "")
    .join(" ");
}

/**
 * The grammar (JSGF, for the recognizer's GRAMMAR request) of answers to `expected`, in words
 * the recognizer's dictionary has (`knows`); null when nothing is left to listen for (an agent
 * whose service names are all unknown words). Every name in it is reduced to lower-case
 * dictionary words, so no service or name can change the grammar's syntax.
 *
 * An answer may have a few carrier words before and after it ("yes that is right please"); the
 * answer itself is required, so every path holds one and speech the grammar has no path for is
 * left to the general model (see PocketsphinxSession). Speech that is no answer but has such a path is heard as
 * the nearest answer ("can I speak to a person" as a name): the agent's confirmation before it
 * books is what catches that. A branch of other words beside the answer, tried on the
 * development set, left such speech alone nine times in ten but lost half the real answers
 * to it (pocketsphinx ignores JSGF weights, so it cannot be made less likely).
 */
export function answerGrammar(expected: ExpectedSpeech, knows: (word: string) => boolean): string | null {
  const rules = new Map<string, string>();
  /** A rule of the phrases whose every word is known; false when none is. */
  const define = (name: string, phrases: readonly string[]): boolean => {
    const known = [...new Set(phrases.map(phrase))].filter((p) => p !== "" && p.split(" ").every(knows));
    if (known.length === 0) return false;
    rules.set(name, known.join(" | "));
    return true;
  };
  let answer: string | null = null;
  let lead = { words: CARRIER_WORDS, most: LEADING_CARRIERS };
  let tail = { words: CARRIER_WORDS, most: TRAILING_CARRIERS };
  switch (expected.answer) {
    case "service":
      if (define("service", expected.services)) answer = "<service>";
      break;
    case "date":
    case "time":
      define("weekday", WEEKDAYS);
      define("month", MONTHS);
      define("ordinal", ORDINALS);
      define("hour", HOURS);
      define("minutes", MINUTES);
      define("part", DAY_PARTS);
      rules.set("day", "today | tomorrow | the day after tomorrow | [next | this] <weekday> | <month> <ordinal> | [the] <ordinal> [of <month>]");
      rules.set("time", "<hour> [<minutes>] [<part>] | noon | half past <hour> | quarter (past | to) <hour>");
      // What was asked for is required, the other welcome: "tuesday at three", "three on tuesday".
      answer = expected.answer === "date" ? "<day> [[at] <time>]" : "[at] <time> [[on] <day>]";
      break;
    case "name": {
      const known = expected.names.map(phrase);
      define("first", [...COMMON_FIRST_NAMES, ...known.map((name) => name.split(" ")[0]!)]);
      define("last", [...COMMON_SURNAMES, ...known.flatMap((name) => name.split(" ").slice(1))]);
      define("cue", NAME_CUES);
      if (rules.has("first")) answer = [rules.has("cue") && "[<cue>]", "<first>", rules.has("last") && "[<last>]"].filter(Boolean).join(" ");
      lead = { words: NAME_LEAD, most: 2 };
      tail = { words: NAME_TAIL, most: 1 };
      break;
    }
    case "yes_no":
      if (define("yes_no", YES_NO)) answer = "<yes_no>";
      break;
  }
  if (answer === null) return null;
  define("lead", lead.words);
  define("tail", tail.words);
  const upTo = (rule: string, most: number) => (rules.has(rule) ? Array.from({ length: most }, () => `[<${rule}>]`) : []);
  const sequence = [...upTo("lead", lead.most), answer, ...upTo("tail", tail.most)].join(" ");
  const body = [...rules].map(([name, alternatives]) => `<${name}> = ${alternatives};`).join("\n");
  return `#JSGF V1.0;\ngrammar answer;\n${body}\npublic <answer> = ${sequence};\n`;
}
