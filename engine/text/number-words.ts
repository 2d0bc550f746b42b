/**
 * Spoken numbers to digits, for date and time parsing of recognizer output.
 *
 * Speech recognizers such as pocketsphinx write "three in the afternoon", "ten thirty" and
 * "the twenty third"; chrono-node only understands digits. `normalizeNumberWords` rewrites
 * numbers, clock times, ordinals and am/pm so that a date parser can read them:
 *
 * - "three in the afternoon" -> "3 in the afternoon", "one hundred and five" -> "105"
 * - "ten thirty" -> "10:30", "three oh five" -> "3:05"
 * - "half past two" -> "2:30", "quarter to four" -> "3:45", "ten after nine" -> "9:10"
 * - "twenty third" -> "23rd", "the first" -> "the 1st"
 * - "nine a m", "nine a.m." -> "9 am"; "three o clock" -> "3 o'clock"
 * - "noon", "midday", "twelve noon" -> "12 pm"; "midnight" -> "12 am"
 * - "twenty twenty six" -> "2026"
 *
 * Other words pass through unchanged; whitespace collapses to single spaces. The output is for
 * parsers, not for display.
 */
export function normalizeNumberWords(text: string): string {
  const tokens = tokenize(text);
  const out: Token[] = [];
  let i = 0;
  while (i < tokens.length) {
    const match = matchAt(tokens, i);
    if (match) {
      out.push({ lead: tokens[i]!.lead, core: match.text, trail: tokens[match.end - 1]!.trail });
      i = match.end;
    } else {
      out.push(tokens[i]!);
      i += 1;
    }
  }
  return joinMeridiems(out)
    .map((t) => t.lead + t.core + t.trail)
    .join(" ");
}

interface Token {
  /** Punctuation before the word. */
  lead: string;
  /** The word itself (letters, digits, inner apostrophes, dots and colons). */
  core: string;
  /** Punctuation after the word: a number never spans a token with trailing punctuation. */
  trail: string;
}

interface Match {
  text: string;
  /** Index of the first token after the match. */
  end: number;
}

const UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"] as const;
const TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"] as const;
const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"] as const;
const ORDINAL_UNITS = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"] as const;
const ORDINAL_TEENS = [
  "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
] as const;
const ORDINAL_TENS = ["", "", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"] as const;
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"] as const;
/** "first" and "second" are dates only next to these ("the first", "march second", "first of"). */
const ORDINAL_DATE_CUES = new Set<string>(["the", "of", ...MONTHS]);
const NUMBER_WORDS = new Set<string>([...UNITS, ...TEENS, ...TENS, ...ORDINAL_UNITS, ...ORDINAL_TEENS, ...ORDINAL_TENS].filter((w) => w !== ""));
/** Words that make "two thirty" a duration rather than a clock time. */
const DURATION_WORDS = new Set(["minute", "minutes", "hour", "hours", "second", "seconds", "percent", "dollars", "days", "weeks"]);
/** Minutes that may be said before "past" or "to" without the word "minutes". */
const ROUND_MINUTES = new Set([5, 10, 20, 25]);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const raw of text.trim().split(/\s+/)) {
    if (raw === "") continue;
    const m = /^([^\p{L}\p{N}]*)(.*?)([^\p{L}\p{N}]*)$/u.exec(raw)!;
    const [, lead = "", core = "", trail = ""] = m;
    // "twenty-three": split only when every part is a number word, so "x-ray" stays whole.
    const parts = core.split("-");
    if (parts.length > 1 && parts.every((p) => NUMBER_WORDS.has(p.toLowerCase()))) {
      parts.forEach((p, k) => tokens.push({ lead: k === 0 ? lead : "", core: p, trail: k === parts.length - 1 ? trail : "" }));
    } else {
      tokens.push({ lead, core, trail });
    }
  }
  return tokens;
}


/** A view of the tokens that stops at punctuation: numbers never run across a comma. */
class Cursor {
  constructor(
    private readonly tokens: readonly Token[],
    readonly start: number,
  ) {}

  /** The lower-case word at `start + offset`, or null past the end or after punctuation. */
  word(offset: number): string | null {
    const index = this.start + offset;
    const token = this.tokens[index];
    if (!token) return null;
    if (offset > 0 && (this.tokens[index - 1]!.trail !== "" || token.lead !== "")) return null;
    return token.core.toLowerCase();
  }
}

function matchAt(tokens: readonly Token[], i: number): Match | null {
  const at = new Cursor(tokens, i);
  return relativeTime(at) ?? clockTime(at) ?? year(at) ?? dayPeriod(at) ?? ordinal(at, tokens) ?? cardinal(at) ?? oClock(at);
}

/** A number read from the words at `from`: its value and how many words it took. */
interface Reading {
  value: number;
  length: number;
}

/** Whole numbers: "seven", "twenty one", "three hundred and five", "two thousand twenty". */
function readCardinal(at: Cursor, from: number): Reading | null {
  const below100 = readBelow100(at, from);
  if (!below100) return null;
  let { value, length } = below100;
  if (at.word(from + length) === "hundred" && value >= 1 && value <= 9) {
    value *= 100;
    length += 1;
    const rest = readTail(at, from + length, 99);
    value += rest.value;
    length += rest.length;
  }
  if (at.word(from + length) === "thousand" && value >= 1 && value <= 999) {
    value *= 1000;
    length += 1;
    const rest = readTail(at, from + length, 999);
    value += rest.value;
    length += rest.length;
  }
  return { value, length };
}

/** The part after "hundred" or "thousand", with an optional "and". */
function readTail(at: Cursor, from: number, max: number): Reading {
  const and = at.word(from) === "and" ? 1 : 0;
  const rest = max >= 100 ? readCardinalBelow1000(at, from + and) : readBelow100(at, from + and);
  if (!rest || rest.value === 0 || rest.value > max) return { value: 0, length: 0 };
  return { value: rest.value, length: rest.length + and };
}

function readCardinalBelow1000(at: Cursor, from: number): Reading | null {
  const below100 = readBelow100(at, from);
  if (!below100) return null;
  if (at.word(from + below100.length) !== "hundred" || below100.value < 1 || below100.value > 9) return below100;
  const rest = readTail(at, from + below100.length + 1, 99);
  return { value: below100.value * 100 + rest.value, length: below100.length + 1 + rest.length };
}

/** 0..99 in words: "seven", "fifteen", "forty", "forty two". */
function readBelow100(at: Cursor, from: number): Reading | null {
  const word = at.word(from);
  if (word === null) return null;
  const unit = (UNITS as readonly string[]).indexOf(word);
  if (unit >= 0) return { value: unit, length: 1 };
  const teen = (TEENS as readonly string[]).indexOf(word);
  if (teen >= 0) return { value: 10 + teen, length: 1 };
  const tens = (TENS as readonly string[]).indexOf(word);
  if (tens < 2) return null;
  const next = at.word(from + 1);
  const nextUnit = next === null ? -1 : (UNITS as readonly string[]).indexOf(next);
  return nextUnit >= 1 ? { value: tens * 10 + nextUnit, length: 2 } : { value: tens * 10, length: 1 };
}

/** Two-digit minutes as said after an hour: "fifteen", "thirty", "forty five", "oh five". */
function readMinutes(at: Cursor, from: number): Reading | null {
  const word = at.word(from);
  if (word === null) return null;
  if (word === "oh" || word === "o" || word === "zero") {
    const unit = (UNITS as readonly string[]).indexOf(at.word(from + 1) ?? "");
    return unit >= 1 ? { value: unit, length: 2 } : null;
  }
  if (/^\d\d$/.test(word)) return { value: Number(word), length: 1 };
  const reading = readBelow100(at, from);
  return reading && reading.value >= 10 && reading.value <= 59 ? reading : null;
}

function readHour(at: Cursor, from: number): Reading | null {
  const reading = readBelow100(at, from) ?? digitsAt(at, from);
  return reading && reading.value >= 1 && reading.value <= 12 ? reading : null;
}

function digitsAt(at: Cursor, from: number): Reading | null {
  const word = at.word(from);
  return word !== null && /^\d{1,2}$/.test(word) ? { value: Number(word), length: 1 } : null;
}

function clock(hour: number, minute: number): string {
  return `${hour}:${String(minute).padStart(2, "0")}`;
}

/** "half past two", "a quarter to four", "ten after nine", "twenty five minutes past six". */
function relativeTime(at: Cursor): Match | null {
  let offset = at.word(0) === "a" ? 1 : 0;
  let minutes: number;
  const first = at.word(offset);
  if (first === "half") {
    minutes = 30;
    offset += 1;
  } else if (first === "quarter") {
    minutes = 15;
    offset += 1;
  } else {
    const reading = readBelow100(at, offset) ?? digitsAt(at, offset);
    if (!reading || reading.value < 1 || reading.value > 29) return null;
    minutes = reading.value;
    offset += reading.length;
    const unit = at.word(offset);
    if (unit === "minutes" || unit === "minute") offset += 1;
    else if (!ROUND_MINUTES.has(minutes)) return null;
  }
  const relation = at.word(offset);
  const before = relation === "to" || relation === "of";
  if (!before && relation !== "past" && relation !== "after") return null;
  if (before && minutes === 30) return null;
  const hour = readHour(at, offset + 1);
  if (!hour) return null;
  let end = offset + 1 + hour.length;
  if (at.word(end) === "o'clock") end += 1;
  const text = before ? clock(hour.value === 1 ? 12 : hour.value - 1, 60 - minutes) : clock(hour.value, minutes);
  return { text, end: at.start + end };
}

/** "ten thirty", "three oh five", "nine forty five", "3 30" (not "two thirty minute sessions"). */
function clockTime(at: Cursor): Match | null {
  const hour = readHour(at, 0);
  if (!hour) return null;
  const minutes = readMinutes(at, hour.length);
  if (!minutes) return null;
  const end = hour.length + minutes.length;
  const after = at.word(end);
  if (after !== null && DURATION_WORDS.has(after)) return null;
  return { text: clock(hour.value, minutes.value), end: at.start + end };
}

/** "nineteen ninety nine", "twenty twenty six". */
function year(at: Cursor): Match | null {
  const century = at.word(0);
  if (century !== "nineteen" && century !== "twenty") return null;
  const rest = readBelow100(at, 1);
  if (!rest || rest.value < 10) return null;
  return { text: String((century === "nineteen" ? 1900 : 2000) + rest.value), end: at.start + 1 + rest.length };
}

/** "noon", "twelve noon", "midday", "midnight". */
function dayPeriod(at: Cursor): Match | null {
  const twelve = at.word(0) === "twelve" || at.word(0) === "12" ? 1 : 0;
  const word = at.word(twelve);
  if (word === "noon" || word === "midday") return { text: "12 pm", end: at.start + twelve + 1 };
  if (word === "midnight") return { text: "12 am", end: at.start + twelve + 1 };
  return null;
}

/** "twenty third" -> "23rd"; "first" and "second" only where they read as dates. */
function ordinal(at: Cursor, tokens: readonly Token[]): Match | null {
  const word = at.word(0);
  if (word === null) return null;
  const tens = (TENS as readonly string[]).indexOf(word);
  if (tens >= 2) {
    const unit = (ORDINAL_UNITS as readonly string[]).indexOf(at.word(1) ?? "");
    if (unit >= 1) return { text: withSuffix(tens * 10 + unit), end: at.start + 2 };
  }
  const unit = (ORDINAL_UNITS as readonly string[]).indexOf(word);
  if (unit >= 1) {
    if (unit <= 2) {
      const previous = at.start > 0 && tokens[at.start - 1]!.trail === "" ? tokens[at.start - 1]!.core.toLowerCase() : "";
      if (!ORDINAL_DATE_CUES.has(previous) && at.word(1) !== "of") return null;
    }
    return { text: withSuffix(unit), end: at.start + 1 };
  }
  const teen = (ORDINAL_TEENS as readonly string[]).indexOf(word);
  if (teen >= 0) return { text: withSuffix(10 + teen), end: at.start + 1 };
  const round = (ORDINAL_TENS as readonly string[]).indexOf(word);
  if (round >= 2) return { text: withSuffix(round * 10), end: at.start + 1 };
  return null;
}

function withSuffix(n: number): string {
  const lastTwo = n % 100;
  if (lastTwo >= 11 && lastTwo <= 13) return `${n}th`;
  const suffix = ["th", "st", "nd", "rd"][n % 10] ?? "th";
  return `${n}${suffix}`;
}

function cardinal(at: Cursor): Match | null {
  const first = at.word(0);
  // Digits pass through as they are; only number words need rewriting.
  if (first === null || /^\d/.test(first)) return null;
  const reading = readCardinal(at, 0);
  return reading ? { text: String(reading.value), end: at.start + reading.length } : null;
}

/** "o clock" and "oclock" -> "o'clock". */
function oClock(at: Cursor): Match | null {
  const word = at.word(0);
  if (word === "oclock") return { text: "o'clock", end: at.start + 1 };
  if (word === "o" && at.word(1) === "clock") return { text: "o'clock", end: at.start + 2 };
  return null;
}

/** After a number: "a m", "a.m.", "AM" -> "am" and the same for pm. */
function joinMeridiems(tokens: readonly Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const previous = out[out.length - 1];
    const afterNumber = previous !== undefined && previous.trail === "" && /^\d{1,2}(:\d\d)?$/.test(previous.core);
    const core = token.core.toLowerCase();
    const next = tokens[i + 1];
    if (afterNumber && (core === "a" || core === "p") && token.trail === "" && next?.core.toLowerCase() === "m") {
      out.push({ lead: token.lead, core: `${core}m`, trail: next.trail });
      i += 1;
    } else if (afterNumber && /^[ap]\.?m$/.test(core)) {
      out.push({ lead: token.lead, core: `${core[0]}m`, trail: token.trail.replace(/^\./, "") });
    } else {
      out.push(token);
    }
  }
  return out;
}
