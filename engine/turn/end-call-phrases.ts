/** Lower-case words only, so "Goodbye!" matches the phrase "goodbye". */
function normalise(text: string): string {
  return ` ${text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ").split(/\s+/).filter(Boolean).join(" ")} `;
}

/**
 * The first of the agent's `end_call_phrases` that `text` contains as whole words, or null.
 * Applies to the caller's words and to the agent's own.
 */
export function matchEndCallPhrase(text: string, phrases: readonly string[]): string | null {
  const haystack = normalise(text);
  for (const phrase of phrases) {
    const needle = normalise(phrase);
    if (needle.trim() && haystack.includes(needle)) return phrase;
  }
  return null;
}
