import { RE2 } from "re2-wasm";

/**
 * API users' regular expressions, run with RE2 (compiled to WebAssembly): its time is linear in
 * the text, so a pattern such as `(a+)+$` cannot hang the process the way it hangs a
 * backtracking engine. RE2 has no backreferences and no lookaround; such a pattern is refused.
 *
 * Two costs of re2-wasm are bounded here:
 * - every RE2 holds memory inside the WebAssembly heap that JavaScript's garbage collector does
 *   not see; it is freed only by an explicit delete. Compiled patterns are shared through a
 *   bounded cache keyed by their source, and the one evicted is deleted.
 * - every search copies the whole text into WebAssembly, so a pattern that matches very often
 *   would cost the text's length squared. The text is searched line by line (a pattern matches
 *   within one line), and each rule has a budget of characters searched per text: when it runs
 *   out the rest of the line, and any later line longer than what is left, is treated as
 *   matched (hidden rather than shown). re2-wasm is pinned: its match offsets count code points
 *   (converted here), and the WebAssembly side is deleted through its private `wrapper`.
 */

/** Longest pattern source accepted. */
export const MAX_PATTERN_LENGTH = 500;
/** Characters one rule may search in one text before the rest of the line counts as matched. */
export const SEARCH_BUDGET_CHARS = 2_000_000;
const CACHE_SIZE = 256;

/** A match of a pattern: character offsets (UTF-16, as String#slice takes them). */
export interface PatternMatch {
  start: number;
  end: number;
}

/** Why RE2 refuses `source`, or null when it compiles and cannot match an empty text. */
export function patternError(source: string): string | null {
  if (source.length === 0) return "must not be empty";
  if (source.length > MAX_PATTERN_LENGTH) return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  let re: RE2;
  try {
    re = compile(source);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, "") : String(error);
    return `not a supported regular expression (${reason}); backreferences and lookaround are not supported`;
  }
  // A pattern that matches nothing ("a*") would match between every two characters.
  try {
    re.lastIndex = 0;
    return re.exec("") !== null ? "must not match an empty text" : null;
  } finally {
    free(re);
  }
}

/** Every non-empty match of `source` in `text`, in order. */
export function patternMatches(source: string, text: string): PatternMatch[] {
  const re = cached(source);
  const matches: PatternMatch[] = [];
  let budget = SEARCH_BUDGET_CHARS;
  let lineStart = 0;
  for (const line of text.split("\n")) {
    const offset = lineStart;
    lineStart += line.length + 1;
    if (line === "") continue;
    // re2-wasm's lastIndex and match index count code points, not UTF-16 units.
    const units = codePointOffsets(line);
    let from = 0;
    while (from < units.length - 1) {
      if (budget < line.length) {
        matches.push({ start: offset + units[from]!, end: offset + line.length });
        break;
      }
      budget -= line.length;
      re.lastIndex = from;
      const match = re.exec(line);
      if (match === null) break;
      const end = match.index + [...match[0]!].length;
      if (end > match.index) matches.push({ start: offset + units[match.index]!, end: offset + units[end]! });
      from = end > match.index ? end : match.index + 1;
    }
  }
  return matches;
}

/** UTF-16 offset of each code point of `text`, and of its end. */
function codePointOffsets(text: string): number[] {
  const offsets: number[] = [];
  let unit = 0;
  for (const char of text) {
    offsets.push(unit);
    unit += char.length;
  }
  offsets.push(unit);
  return offsets;
}

function compile(source: string): RE2 {
  // "g" so that lastIndex is where a search starts; "i": rules are case-insensitive; "u" is required.
  return new RE2(source, "giu");
}

const cache = new Map<string, RE2>();

function cached(source: string): RE2 {
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const re = compile(source);
  cache.set(source, re);
  if (cache.size > CACHE_SIZE) {
    const [oldest, evicted] = cache.entries().next().value!;
    cache.delete(oldest);
    free(evicted);
  }
  return re;
}

/** Frees the WebAssembly side of a compiled pattern (re2-wasm keeps it in a private field). */
function free(re: RE2): void {
  (re as unknown as { wrapper: { delete(): void } }).wrapper.delete();
}
