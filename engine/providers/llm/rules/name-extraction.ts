import { MONTH_NAMES, WEEKDAY_NAMES } from "./calendar.js";
import { STOP_WORD_SET } from "./stop-words.js";
import type { Utterance } from "./utterance.js";

/** Phrases after which the caller says their name for sure. */
const NAME_CUES = ["name is", "call me", "under the name of", "under the name"] as const;
/** Phrases after which a name may follow ("this is jane") or may not ("this is for a cleaning"). */
const WEAK_NAME_CUES = ["this is", "it is", "i am"] as const;
/** After a weak cue the name must end the sentence or be followed by one of these. */
const WEAK_CUE_FOLLOWERS = new Set(["and", "from", "calling", "speaking", "here", "i", "please", "thanks", "thank", "again", "with"]);
/** Said before or after a bare name given as an answer: "yes it is john smith please". */
const FILLERS = new Set([
  "yes", "yeah", "yep", "sure", "okay", "ok", "um", "uh", "er", "erm", "it", "is", "this", "name", "my", "please", "thanks", "thank", "you",
  "so", "well", "oh", "the", "of", "under",
]);
/** Words that end a name or show there was none: booking talk, times, answers, common adjectives. */
const NOT_NAME = new Set<string>([
  ...STOP_WORD_SET,
  ...WEEKDAY_NAMES.map((d) => d.toLowerCase()),
  ...MONTH_NAMES.map((m) => m.toLowerCase()),
  "today", "tomorrow", "tonight", "morning", "afternoon", "evening", "noon", "next", "week", "pm", "time", "date", "day",
  "zero", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "thirty", "forty", "o'clock",
  "appointment", "appointments", "book", "booking", "schedule", "reservation", "service",
  "calling", "looking", "trying", "interested", "ready", "available", "free", "busy", "new", "patient", "customer", "back", "speaking",
  "fine", "good", "great", "happy", "glad", "sick", "confused", "curious", "worried", "late", "early", "open", "closed",
  "correct", "right", "wrong", "sorry", "nope", "nah", "yep", "alright", "perfect", "bye", "goodbye",
  "human", "person", "someone", "somebody", "nobody", "agent", "operator", "representative", "robot", "bot", "machine", "real",
  "still", "there", "none", "nothing", "everything", "something", "anyway", "change", "cancel", "instead", "make", "same", "wait", "hold",
]);

/**
 * The caller's name, title-cased: "my name is john smith" -> "John Smith", "this is jane" ->
 * "Jane", "it's bob" -> "Bob". At most three words, ending at the first word that cannot be a
 * name ("my name is john and ..."). With `bare` (the agent just asked for the name) the whole
 * answer may be the name: "john smith", "sure it's jane please". `notNames` adds the agent's own
 * vocabulary (its service names), so "it's a cleaning" names nobody.
 */
export function findName(utterance: Utterance, options: { bare: boolean; notNames: ReadonlySet<string> }): string | null {
  const mayBeName = (word: string) => /^\p{L}[\p{L}'-]*$/u.test(word) && word.length > 1 && !NOT_NAME.has(word) && !options.notNames.has(word);
  for (const cue of NAME_CUES) {
    const name = nameAfter(utterance.words, cue, mayBeName, false);
    if (name) return name;
  }
  for (const cue of WEAK_NAME_CUES) {
    const name = nameAfter(utterance.words, cue, mayBeName, true);
    if (name) return name;
  }
  if (!options.bare) return null;
  const words = [...utterance.words];
  while (words.length > 0 && FILLERS.has(words[0]!)) words.shift();
  while (words.length > 0 && FILLERS.has(words[words.length - 1]!)) words.pop();
  return words.length >= 1 && words.length <= 3 && words.every(mayBeName) ? titleCase(words) : null;
}

function nameAfter(words: readonly string[], cue: string, mayBeName: (word: string) => boolean, weak: boolean): string | null {
  const cueWords = cue.split(" ");
  for (let i = 0; i + cueWords.length <= words.length; i++) {
    if (!cueWords.every((w, k) => words[i + k] === w)) continue;
    const start = i + cueWords.length;
    let end = start;
    while (end < words.length && end - start < 3 && mayBeName(words[end]!)) end += 1;
    if (end === start) continue;
    // "i am calling about", "i am happy to": a weak cue needs a name-like word that ends the phrase.
    if (weak && (/ing$/.test(words[start]!) || (end < words.length && !WEAK_CUE_FOLLOWERS.has(words[end]!)))) continue;
    return titleCase(words.slice(start, end));
  }
  return null;
}

function titleCase(words: readonly string[]): string {
  return words.map((w) => w.replace(/(^|['-])(\p{L})/gu, (_, sep: string, letter: string) => sep + letter.toUpperCase())).join(" ");
}
