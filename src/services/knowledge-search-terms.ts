/**
 * A caller's question reduced to the words a full-text search may look for. The question is
 * whatever the caller said (or an integrator typed): it is never handed to FTS5's MATCH syntax
 * or to to_tsquery as it is, where a quote, `NEAR`, `*`, `:`, `(` or `-` means something and a
 * stray one is an error. Only runs of letters and digits survive; each becomes a quoted FTS5
 * string or a bare tsquery lexeme, joined with OR, so no character of the input is ever syntax.
 */

/** Words that say nothing about what is asked: dropped so they neither match nor rank. */
const STOP_WORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have how i if in is it its " +
    "me my of on or our please should so that the their them then there these they this to was we were " +
    "what when where which who whom why will with would you your yours am any about tell know want like just"
  ).split(" "),
);

/** At most this many terms: a long question adds nothing but work. */
export const MAX_SEARCH_TERMS = 24;
/** A longer run of letters is no word anyone asks about (and would only bloat the query). */
const MAX_TERM_CHARS = 40;

/** The distinct words of `question`, lower-cased, stop words dropped, in order of first appearance. */
export function searchTerms(question: string): string[] {
  const terms: string[] = [];
  for (const match of question.normalize("NFKC").toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0];
    if (word.length > MAX_TERM_CHARS || STOP_WORDS.has(word) || terms.includes(word)) continue;
    terms.push(word);
    if (terms.length === MAX_SEARCH_TERMS) break;
  }
  return terms;
}

/** An FTS5 MATCH expression: each term a quoted string (letters and digits only, so nothing to escape), joined with OR. */
export function fts5Query(terms: readonly string[]): string {
  return terms.map((t) => `"${t}"`).join(" OR ");
}

/** A to_tsquery text: the terms (letters and digits only, none of tsquery's operators) joined with `|`. */
export function tsQuery(terms: readonly string[]): string {
  return terms.join(" | ");
}
