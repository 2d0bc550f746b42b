const WORD_CHAR = /[\p{L}\p{N}]/u;
/** Pictographs with the joiners, variation selectors, skin tones, flags and keycaps that build emoji sequences. */
const EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\u200d\ufe0e\ufe0f\u20e3]/gu;

/**
 * Reply text as a speech engine should read it: markdown markup and emoji removed (an LLM's
 * `**` and 👍 are not meant to be read aloud), white space collapsed, punctuation kept.
 * Provider-neutral; a provider with a narrower alphabet folds the result further.
 */
export function toSpeechText(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^[ \t]*(?:#{1,6}|>|[-*+•])[ \t]+/gm, "")
    .replace(/`+|~~/g, "")
    .replace(/[*_]+/g, emphasisMark)
    .replace(EMOJI, "")
    .replace(/\s+/g, " ")
    .replace(/ ([,.!?;:])/g, "$1")
    .trim();
}

/**
 * Drops `*` and `_` runs that mark emphasis (they touch a word on one side only, or are doubled);
 * keeps a single one between two words (`snake_case`, `5*3`) or standing alone ("press *").
 */
function emphasisMark(run: string, offset: number, text: string): string {
  if (run.length > 1) return "";
  const before = text[offset - 1] ?? " ";
  const after = text[offset + 1] ?? " ";
  const between = WORD_CHAR.test(before) && WORD_CHAR.test(after);
  const alone = /\s/.test(before) && /\s/.test(after);
  return between || alone ? run : "";
}
