/**
 * The booking conversations of the hearing evaluation: what callers say, in phrasings, names
 * and voices kept apart between a development set (for tuning) and a test set (reported).
 * Nothing here may be tuned on the test set: it only changes when the development set's
 * phrasings do, by rule (see docs/engines.md, "What the embedded recognizer hears").
 */

export type EvalSet = "dev" | "test";

/** One caller's booking call: their lines in order, and what they book. */
export interface BookingConversation {
  id: string;
  set: EvalSet;
  voice: string;
  lines: string[];
  /** The appointment the lines ask for (the evaluation's NOW is Saturday, March 1, 2025). */
  expected: { service: string; date: string; time: string; customer_name: string };
}

/** The agent's services (metadata.services of the evaluated agent). */
export const EVAL_SERVICES = ["cleaning", "checkup", "teeth whitening"] as const;

interface Phrasings {
  request: Array<(service: string) => string>;
  when: Array<(day: string, time: string) => string>;
  name: Array<(first: string, last: string) => string>;
  yes: string[];
}

const PHRASINGS: Record<EvalSet, Phrasings> = {
  dev: {
    request: [(s) => `i would like to book a ${s}`, (s) => `can i make an appointment for a ${s}`, (s) => `i need a ${s} please`],
    when: [(d, t) => `${d} at ${t}`, (d, t) => `how about ${d} at ${t}`, (d, t) => `${d} at ${t} would be good`],
    name: [(f, l) => `my name is ${f} ${l}`, (f, l) => `it is ${f} ${l}`],
    yes: ["yes", "yes please", "that is right"],
  },
  test: {
    request: [(s) => `hi i want to schedule a ${s}`, (s) => `i am calling to book a ${s}`, (s) => `could i get a ${s} appointment`],
    when: [(d, t) => `do you have ${d} at ${t}`, (d, t) => `${d} at ${t} works for me`, (d, t) => `maybe ${d} at ${t}`],
    name: [(f, l) => `the name is ${f} ${l}`, (f, l) => `this is ${f} ${l}`],
    yes: ["yes that is correct", "sure", "yeah"],
  },
};

/** Days as said, with their dates in the week after Saturday, March 1, 2025. */
const DAYS: Record<EvalSet, Array<[string, string]>> = {
  dev: [["monday", "2025-03-03"], ["wednesday", "2025-03-05"], ["friday", "2025-03-07"]],
  test: [["tuesday", "2025-03-04"], ["thursday", "2025-03-06"], ["monday", "2025-03-03"]],
};

/** Times as said, and as booked (within the default booking hours). */
const TIMES: Record<EvalSet, Array<[string, string]>> = {
  dev: [["ten in the morning", "10:00"], ["two in the afternoon", "14:00"], ["eleven thirty", "11:30"], ["four in the afternoon", "16:00"]],
  test: [["nine in the morning", "09:00"], ["three in the afternoon", "15:00"], ["ten thirty", "10:30"], ["one in the afternoon", "13:00"]],
};

/** Names in the recognizer's dictionary (a name it has no word for it cannot hear at all). */
const NAMES: Record<EvalSet, Array<[string, string]>> = {
  dev: [["john", "smith"], ["mary", "jones"], ["david", "brown"], ["susan", "miller"]],
  test: [["james", "wilson"], ["linda", "taylor"], ["robert", "moore"], ["karen", "clark"]],
};

/** Voices per set: the test set's voices are never used to tune. */
export const EVAL_SET_VOICES: Record<EvalSet, readonly string[]> = {
  dev: ["festival-kal", "espeak-en-us"],
  test: ["festival-slt-hts", "espeak-en-us-f", "espeak-en-gb"],
};

/** `perVoice` conversations per voice of `set`, the same every run (varied by index, not at random). */
export function bookingConversations(set: EvalSet, perVoice: number): BookingConversation[] {
  const p = PHRASINGS[set];
  const conversations: BookingConversation[] = [];
  EVAL_SET_VOICES[set].forEach((voice, v) => {
    for (let i = 0; i < perVoice; i++) {
      // Each slot varied on its own (a hash of conversation, voice and slot), the same every run.
      const pick = <T>(list: readonly T[], salt: number) => list[mix(i, v, salt) % list.length]!;
      const [first, last] = pick(NAMES[set], 3);
      const service = pick(EVAL_SERVICES, 1);
      const [day, date] = pick(DAYS[set], 4);
      const [said, time] = pick(TIMES[set], 5);
      conversations.push({
        id: `${set}-${voice}-${i + 1}`,
        set,
        voice,
        lines: [pick(p.request, 0)(service), pick(p.when, 2)(day, said), pick(p.name, 6)(first, last), pick(p.yes, 7)],
        expected: { service, date, time, customer_name: `${first} ${last}` },
      });
    }
  });
  return conversations;
}

/** A well-spread non-negative integer of some small ones (FNV-1a over them): stable seeds and picks. */
export function mix(...values: number[]): number {
  let hash = 2166136261;
  for (const value of values) hash = Math.imul(hash ^ value, 16777619);
  return hash >>> 0;
}
