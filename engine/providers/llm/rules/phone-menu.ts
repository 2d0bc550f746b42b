import { DIGIT_WORDS } from "../../../text/spoken-digits.js";
import { STOP_WORD_SET } from "./stop-words.js";
import type { Utterance } from "./utterance.js";
import { stem } from "./word-stem.js";

/** One choice of a phone menu: the key and what it is for. */
export interface MenuOption {
  key: string;
  /** The option's words ("appointments", "billing questions"). */
  label: string;
}

const KEY_WORDS: Readonly<Record<string, string>> = { ...DIGIT_WORDS, star: "*", pound: "#", hash: "#" };
const PRESS = "(?:press|dial|select|push)";
const KEY = "(zero|oh|one|two|three|four|five|six|seven|eight|nine|star|pound|hash|[0-9])";
const LABEL = `((?:(?!${PRESS}\\b|for\\b|or\\b)[a-z]+ ?)+)`;
/** "press one for appointments", "press two to speak to billing". */
const KEY_THEN_LABEL = new RegExp(`\\b${PRESS} ${KEY} (?:for|to) ${LABEL}`, "g");
/** "for appointments press one". */
const LABEL_THEN_KEY = new RegExp(`\\bfor ${LABEL}${PRESS} ${KEY}\\b`, "g");

/**
 * The options of another company's phone menu as its recording reads them out ("press one for
 * appointments, press two for billing", or "for billing, press two"); null when the words offer
 * no key to press. A recognizer writes no commas, so "for billing press two for sales press
 * three" reads both ways: the way that finds more options is the menu's. A key's first option
 * counts.
 */
export function readPhoneMenu(utterance: Utterance): MenuOption[] | null {
  const keyFirst = [...utterance.text.matchAll(KEY_THEN_LABEL)].map((m) => ({ key: m[1]!, label: m[2]! }));
  const labelFirst = [...utterance.text.matchAll(LABEL_THEN_KEY)].map((m) => ({ key: m[2]!, label: m[1]! }));
  const options = new Map<string, string>();
  for (const { key, label } of labelFirst.length > keyFirst.length ? labelFirst : keyFirst) {
    const pressed = KEY_WORDS[key] ?? key;
    if (!options.has(pressed)) options.set(pressed, label.trim());
  }
  return options.size === 0 ? null : [...options].map(([key, label]) => ({ key, label }));
}

/** What the agent wants from a menu when it is not told: a person. */
export const DEFAULT_MENU_GOAL = ["representative", "operator", "agent", "person", "reception", "receptionist", "front desk", "staff", "human"] as const;

/**
 * The option whose words meet the agent's goal (`metadata.phone_menu_choice`, else a person):
 * the first of the menu's options with a topic word of the goal in its label; null when none.
 */
export function chooseMenuOption(options: readonly MenuOption[], goal: readonly string[]): MenuOption | null {
  const goalWords = new Set(goal.flatMap((phrase) => topicWords(phrase)));
  return options.find((option) => topicWords(option.label).some((w) => goalWords.has(w))) ?? null;
}

function topicWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 1 && !STOP_WORD_SET.has(w))
    .map(stem);
}
