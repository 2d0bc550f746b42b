/**
 * What the caller says over the agent: backchannels ("okay", "uh-huh") are acknowledgements
 * that must not interrupt; stop words ("stop", "wait", "hold on") always interrupt.
 */
export const BACKCHANNEL_PHRASES = [
  "okay",
  "ok",
  "o k",
  "yeah",
  "yep",
  "yes",
  "uh huh",
  "uh-huh",
  "mm hmm",
  "mm-hmm",
  "mhm",
  "hmm",
  "right",
  "sure",
  "alright",
  "all right",
  "i see",
  "got it",
  "cool",
  "great",
] as const;

export const INTERRUPT_PHRASES = ["stop", "wait", "no", "hold on", "hang on", "excuse me", "sorry", "pause"] as const;

function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z' ]/g, " ")
    .split(/\s+/)
    .filter(Boolean);
}

const tokenize = (phrase: string) => phrase.split(/[\s-]+/);
/** Longest first, so "uh huh" is matched whole. */
const BACKCHANNEL_TOKENS = BACKCHANNEL_PHRASES.map(tokenize).sort((a, b) => b.length - a.length);
const INTERRUPT_TOKENS = INTERRUPT_PHRASES.map(tokenize);

function matchesAt(tokens: string[], at: number, phrase: string[]): boolean {
  return phrase.every((w, j) => tokens[at + j] === w);
}

/** True when the words are only acknowledgements (or nothing at all was recognised). */
export function isBackchannel(text: string): boolean {
  const tokens = words(text);
  let at = 0;
  next: while (at < tokens.length) {
    for (const phrase of BACKCHANNEL_TOKENS) {
      if (matchesAt(tokens, at, phrase)) {
        at += phrase.length;
        continue next;
      }
    }
    return false;
  }
  return true;
}

/** True when the words ask the agent to stop talking. */
export function isInterruptRequest(text: string): boolean {
  const tokens = words(text);
  return tokens.some((_, at) => INTERRUPT_TOKENS.some((phrase) => matchesAt(tokens, at, phrase)));
}
