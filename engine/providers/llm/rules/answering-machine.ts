import { hasAnyPhrase, type Utterance } from "./utterance.js";

// An answering machine's greeting, read from its words ("hi, you've reached John Smith, I can't
// take your call right now, please leave a message after the tone"). People on a call use some
// of these words too ("I got your voicemail", "can I leave a message for the doctor", "she's
// not available, can she call you back?"), so one weak cue is not enough. A greeting needs a
// strong phrase, which people hardly say to each other, or weak cues of two kinds of which one
// is an anchor: the machine naming whom you reached, or asking you to leave a message.
// Phrases use the spelled-out forms of `toUtterance` ("cannot", "you have").

/** Phrases of machine greetings, each enough on its own. */
const STRONG = [
  "after the tone", "after the beep", "at the tone", "at the beep", "after the signal", "hear the tone", "hear the beep",
  "cannot take your call", "can not take your call", "unable to take your call", "not able to take your call", "not available to take your call",
  "cannot come to the phone", "can not come to the phone", "unable to come to the phone", "cannot get to the phone", "cannot answer the phone",
  "unable to answer the phone", "leave your message", "leave a brief message", "leave a short message", "record your message",
  "voice mailbox", "voicemail box", "reached the voicemail", "reached the voice mail", "reached the mailbox",
] as const;

type CueKind = "reached" | "message" | "unavailable" | "callback" | "mailbox";

/** Weak cues by kind. */
const WEAK: Readonly<Record<CueKind, readonly string[]>> = {
  reached: ["you have reached", "you have called", "you reached"],
  message: ["leave a message", "leave me a message", "leave us a message", "leave your name", "leave your number", "your name and number"],
  unavailable: ["not available", "unavailable", "not here right now", "away from the phone", "away from my desk", "not at my desk"],
  callback: ["get back to you", "return your call", "call you back", "as soon as possible", "as soon as i can", "as soon as we can"],
  mailbox: ["voicemail", "voice mail", "mailbox", "answering machine", "beep", "tone"],
};

/** Kinds that one other kind of cue makes a greeting. */
const ANCHORS: readonly CueKind[] = ["reached", "message"];

/** The caller asking to leave a message is not a machine asking them to. */
const CALLER_LEAVES_MESSAGE = [
  "can i leave", "could i leave", "may i leave", "i would like to leave", "i want to leave", "i wanted to leave", "i need to leave", "i will leave",
  "i just want to leave", "i am leaving",
] as const;

/** The kinds of weak cue in `utterance`. */
export function machineCueKinds(utterance: Utterance): CueKind[] {
  const callerLeaves = hasAnyPhrase(utterance, CALLER_LEAVES_MESSAGE);
  return (Object.keys(WEAK) as CueKind[]).filter((kind) => !(kind === "message" && callerLeaves) && hasAnyPhrase(utterance, WEAK[kind]));
}

/** Whether the caller's words are an answering machine's (or a voicemail service's) greeting. */
export function isAnsweringMachineGreeting(utterance: Utterance): boolean {
  if (hasAnyPhrase(utterance, STRONG)) return true;
  const kinds = machineCueKinds(utterance);
  return kinds.length >= 2 && kinds.some((kind) => ANCHORS.includes(kind));
}
