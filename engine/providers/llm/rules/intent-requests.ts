import { DIGIT_WORDS, digitRuns } from "../../../text/spoken-digits.js";
import type { DialogueIntent } from "../../../types.js";
import { bestTopicMatch, topicWords, type TopicEntry } from "./topic-match.js";
import { toUtterance, type Utterance } from "./utterance.js";

/**
 * The agent's intents, one entry per example reduced to its topic words, built once per call:
 * matched like FAQ questions (see topic-match.ts), so "can you tell me where my order is"
 * finds the example "where is my order".
 */
export interface IntentIndex {
  readonly entries: readonly TopicEntry<DialogueIntent>[];
}

/** What a caller says before the value itself ("it is", "my order number is", "sure, that's"). */
const LEAD_IN = /^(?:(?:yes|yeah|sure|okay|ok|so|um|uh|well)\s+)*(?:(?:it|that|this)\s+is\s+|(?:my|the)\s+(?:\w+\s+){0,3}is\s+|i\s+think\s+(?:it\s+is\s+)?)?/;

export function buildIntentIndex(intents: readonly DialogueIntent[]): IntentIndex {
  return { entries: intents.flatMap((intent) => intent.examples.map((example) => ({ item: intent, topics: topicWords(toUtterance(example)) }))) };
}

/**
 * The intent one of whose examples best matches the caller's words, or null below the
 * threshold. Numbers are left out: "where is my order one two three" names the order, not
 * four more topics.
 */
export function matchIntent(index: IntentIndex, utterance: Utterance): DialogueIntent | null {
  const words = utterance.words.filter((word) => !(word in DIGIT_WORDS) && !/^\d+$/.test(word));
  return bestTopicMatch(index.entries, toUtterance(words.join(" ")));
}

/**
 * The caller's answer to a slot's question, as the tool gets it: a number said digit by digit
 * ("a one two three four") as its digits, anything else as the words after a lead-in ("my
 * order number is", "it's"); null when nothing is left.
 */
export function slotAnswer(utterance: Utterance): string | null {
  const [digits] = digitRuns(utterance.words, 3);
  if (digits !== undefined) return digits;
  const words = utterance.text.replace(LEAD_IN, "").trim();
  return words === "" ? null : words;
}
