import { MONTH_NAMES, WEEKDAY_NAMES } from "./calendar.js";
import { STOP_WORD_SET } from "./stop-words.js";
import type { Utterance } from "./utterance.js";
import { toUtterance } from "./utterance.js";
import { wordsMatch } from "./word-match.js";
import { stem } from "./word-stem.js";

/** A service: one of the agent's `metadata.services`, or the caller's own words when there is no list. */
export interface Service {
  name: string;
  /** The appointment length when the metadata gives one. */
  durationMinutes: number | null;
}

/** Heads of phrases after "a"/"an" that name no service: "an appointment", "a quick question" (stems too). */
const NOT_SERVICES = new Set([
  "appointment", "appointments", "booking", "reservation", "time", "slot", "minute", "second", "moment", "question", "quick", "bit",
  "call", "human", "person", "real", "live", "representative", "agent", "operator", "day", "week", "month", "new", "few", "couple",
  "lot", "little", "good", "great", "problem", "way", "message", "number", "patient", "customer", "robot", "machine", "bot", "while",
  "hour", "test", "thing", "name",
]);
/** Words that end a free service phrase: "a haircut tomorrow at 3", "a cleaning for john" (not "up": "a check up"). */
const PHRASE_ENDS = new Set([
  ...[...STOP_WORD_SET].filter((w) => w !== "up"),
  ...WEEKDAY_NAMES.map((d) => d.toLowerCase()),
  ...MONTH_NAMES.map((m) => m.toLowerCase()),
  "today", "tomorrow", "tonight", "morning", "afternoon", "evening", "noon", "next", "this", "around", "o'clock", "pm", "appointment", "appointments",
  "zero", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "quarter", "half", "past",
  "sometime", "booked", "scheduled", "instead",
]);
/** Leading words of an answer to "what is the appointment for?" that are not the service. */
const ANSWER_FILLERS = new Set([
  "i", "would", "like", "want", "need", "just", "um", "uh", "it", "is", "for", "please", "to", "get", "book", "have", "my", "yes", "yeah",
  "sure", "okay", "ok", "the", "some", "so", "a", "an",
]);

/**
 * The service the caller wants. With `options` (the agent's list) the caller's words must name
 * one of them, by its last word at least ("whitening" for "Teeth whitening"), with small
 * recognizer errors forgiven. Without a list the service is the caller's own phrase after
 * "a"/"an" ("for a cleaning", "i need a haircut") or, when `bare` (the agent just asked
 * for it), the whole answer ("dental cleaning please").
 */
export function findService(utterance: Utterance, options: readonly Service[], bare: boolean): Service | null {
  return options.length > 0 ? findListedService(utterance, options) : findFreeService(utterance, bare);
}

function findListedService(utterance: Utterance, options: readonly Service[]): Service | null {
  // Adjacent pairs too: recognizers split "checkup" into "check up".
  const said = [...utterance.words, ...utterance.words.slice(1).map((w, i) => utterance.words[i] + w)];
  let best: Service | null = null;
  let bestMatched = 0;
  for (const option of options) {
    const words = toUtterance(option.name).words.filter((w) => !STOP_WORD_SET.has(w));
    const head = words[words.length - 1];
    if (head === undefined) continue;
    const matched = words.filter((w) => said.some((s) => wordsMatch(s, w))).length;
    const headMatched = said.some((s) => wordsMatch(s, head));
    if ((headMatched || matched === words.length) && matched > bestMatched) {
      best = option;
      bestMatched = matched;
    }
  }
  return best;
}

function findFreeService(utterance: Utterance, bare: boolean): Service | null {
  const words = utterance.words;
  for (let i = 0; i < words.length; i++) {
    if (words[i] !== "a" && words[i] !== "an") continue;
    const phrase = phraseAt(words, i + 1);
    if (phrase) return { name: phrase, durationMinutes: null };
  }
  if (!bare) return null;
  let start = 0;
  while (start < words.length && ANSWER_FILLERS.has(words[start]!)) start += 1;
  const phrase = phraseAt(words, start);
  return phrase ? { name: phrase, durationMinutes: null } : null;
}

/** Up to three words from `start`, ended by time words or fillers; null when none or not a service. */
function phraseAt(words: readonly string[], start: number): string | null {
  const phrase: string[] = [];
  for (let j = start; j < words.length && phrase.length < 3 && !PHRASE_ENDS.has(words[j]!) && /^\p{L}/u.test(words[j]!); j++) phrase.push(words[j]!);
  const head = phrase[phrase.length - 1];
  if (head === undefined || NOT_SERVICES.has(head) || NOT_SERVICES.has(stem(head))) return null;
  return phrase.join(" ");
}
