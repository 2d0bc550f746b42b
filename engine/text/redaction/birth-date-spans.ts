import { gapBetween, lowerSameLength, type TextToken } from "./text-tokens.js";

/**
 * Dates of birth: a whole date whose year is from 1900 to this year and that is not after
 * today ("03/04/1985", "1985-03-04", "march third nineteen eighty five", "3rd of March 1985"),
 * or any date, month and day, month and year, year or run of digits said right after "born",
 * "birthday", "date of birth", "d o b" ("my birthday is march fifth").
 *
 * An appointment said without a year ("thursday at ten am", "march fifth") is not hidden, nor
 * one in the future ("march fifth twenty thirty"); one in the past with its year is (it cannot
 * be told apart from a birth date).
 */
export function birthDateSpans(text: string, tokens: readonly TextToken[], nowMs: number): Array<{ start: number; end: number }> {
  const today = new Date(nowMs);
  const now = { year: today.getUTCFullYear(), month: today.getUTCMonth() + 1, day: today.getUTCDate() };
  const notAfterToday = (d: PartialDate) =>
    d.year !== undefined && d.year >= 1900 &&
    (d.year < now.year || (d.year === now.year && (d.month! < now.month || (d.month === now.month && (d.day ?? 1) <= now.day))));
  const spans: Array<{ start: number; end: number }> = [];

  for (const m of lowerSameLength(text).matchAll(NUMERIC_DATE)) {
    const [, a, , b, y] = m;
    const year = expandYear(y!, now.year);
    const dates = [date(year, Number(a), Number(b)), date(year, Number(b), Number(a))].filter((d) => d !== null);
    if (dates.some(notAfterToday)) spans.push({ start: m.index, end: m.index + m[0].length });
  }
  for (const m of lowerSameLength(text).matchAll(ISO_DATE)) {
    const d = date(Number(m[1]), Number(m[2]), Number(m[3]));
    if (d && notAfterToday(d)) spans.push({ start: m.index, end: m.index + m[0].length });
  }

  const at = new Reader(text, tokens);
  let cueUntil = -1;
  for (let i = 0; i < tokens.length; i++) {
    const cue = cueLength(at, i);
    if (cue > 0) {
      cueUntil = i + cue + CUE_REACH;
      i += cue - 1;
      continue;
    }
    const afterCue = i < cueUntil;
    const found = wordDate(at, i, afterCue) ?? (afterCue ? cueOnlyDate(at, i) : null);
    if (!found || (!afterCue && !notAfterToday(found.date))) continue;
    // "the third of march 1985": the article is not part of the date.
    const first = tokens[i]!.word === "the" && found.end > i + 1 ? i + 1 : i;
    spans.push({ start: tokens[first]!.start, end: tokens[found.end - 1]!.end });
    i = found.end - 1;
    if (afterCue) cueUntil = -1;
  }
  return spans;
}

/** How many words after a cue the date may start ("my date of birth is uh the fifth of march"). */
const CUE_REACH = 6;
const NUMERIC_DATE = /(?<![0-9/.-])([0-9]{1,2})([/.-])([0-9]{1,2})\2([0-9]{4}|[0-9]{2})(?![0-9]|[/.-][0-9])/g;
const ISO_DATE = /(?<![0-9/.-])([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?![0-9]|[/.-][0-9])/g;
const MONTHS: Readonly<Record<string, number>> = {
  january: 1, february: 2, march: 3, april: 4, may: 5, june: 6, july: 7, august: 8, september: 9, october: 10, november: 11, december: 12,
  jan: 1, feb: 2, mar: 3, apr: 4, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
};
const UNITS: Readonly<Record<string, number>> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9 };
const TEENS: Readonly<Record<string, number>> = {
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const ORDINAL_UNITS: Readonly<Record<string, number>> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9,
};
const ORDINALS: Readonly<Record<string, number>> = {
  ...ORDINAL_UNITS, tenth: 10, eleventh: 11, twelfth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16,
  seventeenth: 17, eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
};

interface PartialDate {
  year?: number;
  month?: number;
  day?: number;
}

interface Found {
  date: PartialDate;
  /** Index just past the last token of the date. */
  end: number;
}

/** Tokens read as words, stopping at a line break or a sentence's end. */
class Reader {
  constructor(
    readonly text: string,
    readonly tokens: readonly TextToken[],
  ) {}

  /** The word at `i` when it continues the phrase that token `from` started, else null. */
  word(from: number, i: number): string | null {
    const token = this.tokens[i];
    if (!token) return null;
    for (let k = from; k < i; k++) if (!/^[ \t,]*$/.test(gapBetween(this.text, this.tokens[k]!, this.tokens[k + 1]!))) return null;
    return token.word;
  }
}

function date(year: number, month: number, day: number): PartialDate | null {
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 ? { year, month, day } : null;
}

function expandYear(digits: string, thisYear: number): number {
  if (digits.length === 4) return Number(digits);
  // A two-digit year is the most recent one: "85" is 1985, "07" is 2007.
  const year = 2000 + Number(digits);
  return year > thisYear ? year - 100 : year;
}

/** The words at `i` that announce a date of birth, or 0. */
function cueLength(at: Reader, i: number): number {
  // "d.o.b." and "date-of-birth" are cues too, so dots and dashes may stand between its words.
  const w = (k: number) => {
    for (let j = i; j < i + k; j++) if (!/^[ \t.\-:]*$/.test(gapBetween(at.text, at.tokens[j]!, at.tokens[j + 1] ?? at.tokens[j]!))) return null;
    return at.tokens[i + k]?.word ?? null;
  };
  const first = w(0)?.replace(/['\u2019]s$/, "");
  if (first === "born" || first === "birthday" || first === "birthdate" || first === "dob") return 1;
  if (first === "date" && w(1) === "of" && w(2) === "birth") return 3;
  if (first === "birth" && w(1) === "date") return 2;
  if (first === "d" && w(1) === "o" && w(2) === "b") return 3;
  return 0;
}

/**
 * A date said with a month name: "march third nineteen eighty five", "march 3rd, 1985",
 * "3rd of march 1985", "the third of march". Without a cue the year is required.
 */
function wordDate(at: Reader, i: number, afterCue: boolean): Found | null {
  // Month first: "march [the] third [,] [of] nineteen eighty five".
  const month = MONTHS[at.word(i, i) ?? ""];
  if (month !== undefined) {
    let k = i + 1;
    if (at.word(i, k) === "the") k += 1;
    for (const day of readDays(at, i, k)) {
      let y = day.end;
      if (at.word(i, y) === "of" || at.word(i, y) === "in") y += 1;
      const year = readYear(at, i, y);
      if (year) return { date: { year: year.value, month, day: day.value }, end: year.end };
    }
    const year = readYear(at, i, i + 1);
    if (afterCue && year) return { date: { year: year.value, month }, end: year.end };
    const day = readDays(at, i, k)[0];
    if (afterCue && day) return { date: { month, day: day.value }, end: day.end };
    return null;
  }
  // Day first: "[the] third of march [,] nineteen eighty five", "3 march 1985".
  const start = at.word(i, i) === "the" ? i + 1 : i;
  for (const day of readDays(at, i, start)) {
    let k = day.end;
    if (at.word(i, k) === "of") k += 1;
    const m = MONTHS[at.word(i, k) ?? ""];
    if (m === undefined) continue;
    const year = readYear(at, i, at.word(i, k + 1) === "in" ? k + 2 : k + 1);
    if (year) return { date: { year: year.value, month: m, day: day.value }, end: year.end };
    if (afterCue) return { date: { month: m, day: day.value }, end: k + 1 };
  }
  return null;
}

/** After a cue only: a year ("born in nineteen eighty five") or a run of 4 to 8 digits. */
function cueOnlyDate(at: Reader, i: number): Found | null {
  const year = readYear(at, i, i);
  if (year) return { date: { year: year.value }, end: year.end };
  let digits = "";
  let k = i;
  for (; ; k++) {
    const word = at.word(i, k);
    if (word === null) break;
    // "oh three oh four eighty five": digits and numbers said in words, as people say a date.
    const value = word === "oh" || word === "o" || word === "zero" ? 0 : (UNITS[word] ?? TEENS[word] ?? TENS[word]);
    if (/^[0-9]+$/.test(word)) digits += word;
    else if (value !== undefined) digits += String(value);
    else break;
  }
  if (digits.length >= 4 && digits.length <= 8) return { date: {}, end: k };
  return null;
}

/** Ways of reading a day of the month at `k`, the longest first. */
function readDays(at: Reader, from: number, k: number): Array<{ value: number; end: number }> {
  const word = at.word(from, k);
  if (word === null) return [];
  const out: Array<{ value: number; end: number }> = [];
  const digits = /^([0-9]{1,2})(st|nd|rd|th)?$/.exec(word);
  if (digits) out.push({ value: Number(digits[1]), end: k + 1 });
  const tens = TENS[word];
  if (tens !== undefined && tens <= 30) {
    const next = at.word(from, k + 1) ?? "";
    const unit = ORDINAL_UNITS[next] ?? UNITS[next];
    if (unit !== undefined) out.push({ value: tens + unit, end: k + 2 });
    out.push({ value: tens, end: k + 1 });
  }
  const single = ORDINALS[word] ?? UNITS[word] ?? TEENS[word];
  if (single !== undefined) out.push({ value: single, end: k + 1 });
  return out.filter((d) => d.value >= 1 && d.value <= 31);
}

/** A year from 1900 at `k`: "1985", "nineteen eighty five", "nineteen oh five", "two thousand three", "twenty twelve". */
function readYear(at: Reader, from: number, k: number): { value: number; end: number } | null {
  const word = at.word(from, k);
  if (word === null) return null;
  if (/^(19|20)[0-9]{2}$/.test(word)) return { value: Number(word), end: k + 1 };
  if (word === "nineteen" || word === "twenty") {
    const century = word === "nineteen" ? 1900 : 2000;
    const rest = readBelow100(at, from, k + 1);
    if (rest && rest.value >= 10) return { value: century + rest.value, end: rest.end };
    const next = at.word(from, k + 1);
    if ((next === "oh" || next === "o") && UNITS[at.word(from, k + 2) ?? ""] !== undefined) {
      return { value: century + UNITS[at.word(from, k + 2)!]!, end: k + 3 };
    }
    if (word === "nineteen" && next === "hundred") return { value: 1900, end: k + 2 };
    return null;
  }
  if (word === "two" && at.word(from, k + 1) === "thousand") {
    let end = k + 2;
    if (at.word(from, end) === "and") end += 1;
    const rest = readBelow100(at, from, end);
    return rest ? { value: 2000 + rest.value, end: rest.end } : { value: 2000, end: k + 2 };
  }
  return null;
}

function readBelow100(at: Reader, from: number, k: number): { value: number; end: number } | null {
  const word = at.word(from, k);
  if (word === null) return null;
  if (UNITS[word] !== undefined) return { value: UNITS[word]!, end: k + 1 };
  if (TEENS[word] !== undefined) return { value: TEENS[word]!, end: k + 1 };
  const tens = TENS[word];
  if (tens === undefined) return null;
  const unit = UNITS[at.word(from, k + 1) ?? ""];
  return unit !== undefined ? { value: tens + unit, end: k + 2 } : { value: tens, end: k + 1 };
}
