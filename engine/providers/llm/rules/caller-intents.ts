import { digitRuns } from "../../../text/spoken-digits.js";
import type { BookingSlot } from "./booking-draft.js";
import { similarWords } from "./similar-words.js";
import { hasAnyPhrase, type Utterance } from "./utterance.js";

// What the caller wants, read from keywords and phrases. Each test stands alone; the session
// decides which one wins. Phrases use the spelled-out forms of `toUtterance` ("that is all",
// not "that's all"). Long keywords forgive small recognizer errors (`similarWords`).

const YES = [
  "yes", "yeah", "yep", "yup", "ya", "yah", "sure", "correct", "right", "okay", "ok", "alright", "all right", "absolutely", "definitely",
  "perfect", "exactly", "great", "fine", "please do", "go ahead", "sounds good", "that works", "book it", "do it", "of course", "uh huh",
  "mm hmm", "affirmative", "that is it",
] as const;
const NO = ["no", "nope", "nah", "not", "wrong", "incorrect", "negative", "change", "wait", "hold on", "do not", "cannot", "never mind"] as const;

export type YesNo = "yes" | "no";

/** The caller's answer to a yes/no question; a negation wins over a yes in the same breath ("that's not right"). */
export function yesOrNo(utterance: Utterance): YesNo | null {
  if (hasAnyPhrase(utterance, NO)) return "no";
  if (hasAnyPhrase(utterance, YES)) return "yes";
  return null;
}

const GOODBYES = [
  "bye", "goodbye", "good bye", "bye bye", "hang up", "talk to you later", "see you later", "see ya", "have a good day", "have a nice day",
  "have a great day", "have a good one", "good night",
] as const;
const CLOSINGS = [
  "that is all", "that is it", "that is everything", "that will be all", "nothing else", "no thanks", "no thank you", "i am done", "all done",
  "that is all i need", "nope",
] as const;

/**
 * "strong": a goodbye whatever the state ("bye", or one of the agent's end-call phrases);
 * "done": a closing ("that's all", "no thanks") that may also answer a pending question
 * ("that's it" can confirm a booking).
 */
export type Goodbye = "strong" | "done";

export function goodbyeKind(utterance: Utterance, endCallPhrases: readonly string[]): Goodbye | null {
  if (hasAnyPhrase(utterance, GOODBYES) || hasAnyPhrase(utterance, endCallPhrases)) return "strong";
  if (hasAnyPhrase(utterance, CLOSINGS)) return "done";
  return null;
}

/** "i'm good", "all set": a no, but only as the answer to "anything else?" ("hi i'm good how are you" is not). */
export function isNothingElse(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, ["i am good", "i am fine", "i am ok", "i am okay", "all set", "i think that is it", "that should be it"]);
}

/** Words that ask for a human on their own: "operator", "representative please". */
const HUMAN_WORDS = ["human", "representative", "operator", "receptionist", "agent"] as const;
/** Words that ask for a human only with a word of reaching: "talk to someone", "a real person". */
const PERSON_WORDS = ["someone", "somebody", "person", "anyone", "anybody", "people"] as const;
const REACH_WORDS = ["speak", "talk", "transfer", "connect", "put me through", "get me", "real", "live", "actual"] as const;
/** "are you a real person?" asks who is speaking; "are you able to transfer me" asks for a transfer. */
const IDENTITY_QUESTIONS = [
  "are you a", "are you an", "are you real", "are you human", "are you automated", "is this a", "is this an", "is this real",
  "is this automated", "am i talking to a", "am i speaking to a", "am i speaking with a", "am i talking with a",
] as const;
const WHAT_AM_I = ["robot", "bot", "machine", "computer", "human", "person", "real", "ai", "automated", "recording", "assistant"] as const;

export function isTransferRequest(utterance: Utterance): boolean {
  if (isIdentityQuestion(utterance)) return false;
  if (utterance.words.some((w) => HUMAN_WORDS.some((h) => similarWords(w, h) || w === `${h}s`))) return true;
  return utterance.words.some((w) => (PERSON_WORDS as readonly string[]).includes(w)) && hasAnyPhrase(utterance, REACH_WORDS);
}

/** "are you a robot", "is this a real person", "am i talking to a machine". */
export function isIdentityQuestion(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, IDENTITY_QUESTIONS) && hasAnyPhrase(utterance, WHAT_AM_I);
}

/** "who is this", "what is your name". */
export function isWhoAreYou(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, ["who is this", "who are you", "what is your name", "who am i speaking", "who am i talking", "who is speaking"]);
}

export function isGreeting(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, ["hi", "hello", "hey", "good morning", "good afternoon", "good evening", "hiya", "howdy"]);
}

export function isHowAreYou(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, ["how are you", "how is it going", "how are things", "how you doing"]);
}

export function isThanks(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, ["thanks", "thank you", "appreciate it", "cheers"]);
}

const BOOKING_WORDS = ["book", "booking", "appointment", "schedule", "reserve", "reservation"] as const;
const SLOT_REQUESTS = [
  "come in", "see someone", "see a", "available", "availability", "opening", "openings", "do you have", "anything", "free", "slot", "any time",
] as const;

/** "i'd like to book", "can i make an apointment", "i need to schedule a cleaning". */
export function isBookingRequest(utterance: Utterance): boolean {
  return utterance.words.some((w) => BOOKING_WORDS.some((b) => similarWords(w, b) || w === `${b}s`));
}

/** Words that make a day or time in a question a request for it: "can i come in at 3", "anything free friday". */
export function asksForSlot(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, SLOT_REQUESTS);
}

const EXISTING_APPOINTMENT = [
  "cancel my", "cancel an", "cancel the", "cancel appointment", "reschedule", "move my appointment", "change my appointment", "change my booking",
] as const;

/** Asking about an appointment that exists: the rules engine only books new ones. */
export function isExistingAppointmentRequest(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, EXISTING_APPOINTMENT);
}

/** Dropping the booking in progress. */
export function isCancelRequest(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, ["cancel", "forget it", "forget about it", "never mind", "do not book", "do not want", "not interested"]);
}

const REPEAT_ALONE = ["what", "sorry", "pardon", "pardon me", "excuse me", "come again", "huh", "say again", "sorry what", "what was that"] as const;
const REPEAT_PHRASES = [
  "repeat", "say that again", "say it again", "did not catch", "did not hear", "did not get that", "could not hear", "one more time",
] as const;

/** "what?", "can you repeat that", "sorry i didn't catch that" (but not "sorry i meant four"). */
export function isRepeatRequest(utterance: Utterance): boolean {
  return (REPEAT_ALONE as readonly string[]).includes(utterance.text) || hasAnyPhrase(utterance, REPEAT_PHRASES);
}

/** Not "can i" or "could i": those are requests ("can i book for tuesday"). */
const QUESTION_STARTS = ["are", "is", "do", "does", "what", "when", "where", "how", "which", "will", "why", "who"] as const;

/**
 * Starts like a question for information: an FAQ answer comes before booking ("how much does
 * it cost to book a cleaning"), and a day in it is asked about ("are you open saturday").
 */
export function isQuestion(utterance: Utterance): boolean {
  const first = utterance.words[0];
  return first !== undefined && (QUESTION_STARTS as readonly string[]).includes(first);
}

/** Which part of the booking the caller wants to change: "the time", "wrong day", "my name". */
export function slotToChange(utterance: Utterance): BookingSlot | null {
  if (hasAnyPhrase(utterance, ["name"])) return "name";
  if (hasAnyPhrase(utterance, ["date", "day"])) return "date";
  if (hasAnyPhrase(utterance, ["time", "hour", "earlier", "later"])) return "time";
  if (hasAnyPhrase(utterance, ["service", "type", "kind", "reason"])) return "service";
  return null;
}

/**
 * Asking not to be called again: "stop calling me", "do not call me again", "take me off your
 * list", "remove my number". "Wait, stop" and "call me back later" are not.
 */
const DO_NOT_CALL_PHRASES = [
  "stop calling", "quit calling", "stop phoning", "do not call me", "do not call this number", "do not ever call", "never call me",
  "never call this number", "no more calls", "not call me again", "not to call me", "do not want any more calls", "do not want more calls",
  "do not want your calls", "do not want these calls", "do not call list", "do not call registry", "take me off", "take my number off",
  "remove me", "remove my number", "delete my number", "lose my number", "off your list", "off your calling list", "off the list", "off your call list",
] as const;

export function isDoNotCallRequest(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, DO_NOT_CALL_PHRASES);
}

/**
 * Giving a phone number: "my phone number is four one five ...", "you can reach me at 415 555
 * 0199" (seven digits or more in a row). Its digits are no day or time, and no misunderstanding.
 */
export function isPhoneNumberStatement(utterance: Utterance): boolean {
  return digitRuns(utterance.words).length > 0 && hasAnyPhrase(utterance, ["number", "reach me", "call me at", "call me on"]);
}

/** Declining what the call offers: "i am not interested", "not for me". */
const NOT_INTERESTED = ["not interested", "no interest", "not for me", "i will pass", "i do not need it", "i do not need that", "we do not need"] as const;

export function isNotInterested(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, NOT_INTERESTED);
}

/**
 * Asking to be called back: "call me back tomorrow", "i am busy right now", "not a good time".
 * "Can I call you back" (the caller will call) is not; "do not call me back" is the
 * do-not-call list's, checked before this.
 */
const CALLBACK_PHRASES = [
  "call me back", "call me later", "call me again later", "call me tomorrow", "call me another time", "call back later", "call back tomorrow",
  "ring me back", "try me later", "try me again", "try again later", "not a good time", "bad time", "busy right now", "busy at the moment",
  "in a meeting", "driving right now",
] as const;

export function isCallbackRequest(utterance: Utterance): boolean {
  return hasAnyPhrase(utterance, CALLBACK_PHRASES);
}
