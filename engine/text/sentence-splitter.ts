/**
 * Abbreviations that do not end a sentence even before a capital ("Dr. Smith", "e.g. Paris"),
 * lower-case and without their last period. Others ("etc.", "a.m.", "Inc.") end one when a
 * capital follows, like any word.
 */
export const NON_FINAL_ABBREVIATIONS = [
  "mr", "mrs", "ms", "mx", "dr", "prof", "st", "mt", "ft", "gen", "col", "capt", "lt", "sgt", "rev", "hon",
  "gov", "sen", "rep", "e.g", "i.e", "vs", "cf", "approx", "incl", "dept", "fig",
] as const;

const NON_FINAL = new Set<string>(NON_FINAL_ABBREVIATIONS);
const TERMINATORS = ".!?…";
/** Closing quotes, brackets and markdown emphasis that belong to the sentence they follow. */
const CLOSERS = "\"'”’)]}*_";
/** Opening marks stripped before a word is compared with the abbreviations. */
const OPENERS = /^["'“‘([{*_]+/;
const CLAUSE_END = /[,;:]["'”’)\]}*_]*\s+/g;

export interface SentenceSplitterOptions {
  /**
   * While a reply's first sentence runs past this many words, it is cut at its last comma,
   * semicolon or colon so speech can start before the sentence ends. Default 12; 0 turns it off.
   */
  firstClauseWords?: number;
}

/** Where the first certain sentence end lies: an index, or undefined while the next characters decide. */
type End = number | undefined;

/**
 * Streaming sentence boundaries for reply text that arrives in token pieces. `push` returns every
 * sentence whose end is certain; `flush` (at the end of the reply) returns the rest and readies
 * the splitter for the next reply. Deterministic: the same text gives the same sentences however
 * it is cut into pieces (the first-clause rule aside, which looks at what has arrived).
 *
 * A sentence ends at `.`, `!`, `?` or `…` (runs like `?!` or `...` count once), with any closing
 * quotes or brackets, followed by white space and then a character that is not a lower-case
 * letter; so the end is known one character after the space. A period does not end a sentence
 * after a non-final abbreviation, a single capital (an initial: "J. Smith") or a bare number
 * (a list item: "1. Open the app"). A line break always ends one. Decimals ("3.5") and clock
 * times ("10:30") never contain a boundary because no space follows their separators.
 */
export class SentenceSplitter {
  private readonly firstClauseWords: number;
  private buffer = "";
  private emitted = false;

  constructor(options: SentenceSplitterOptions = {}) {
    this.firstClauseWords = options.firstClauseWords ?? 12;
  }

  push(piece: string): string[] {
    this.buffer += piece;
    const sentences: string[] = [];
    for (let end = sentenceEnd(this.buffer); end !== undefined; end = sentenceEnd(this.buffer)) this.take(end, sentences);
    if (!this.emitted && this.firstClauseWords > 0 && wordCount(this.buffer) > this.firstClauseWords) {
      const end = lastClauseEnd(this.buffer);
      if (end !== undefined) this.take(end, sentences);
    }
    return sentences;
  }

  /** The rest of the reply (no sentence end needed); the next push starts a new reply. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = "";
    this.emitted = false;
    return rest ? [rest] : [];
  }

  private take(end: number, into: string[]): void {
    const sentence = this.buffer.slice(0, end).trim();
    this.buffer = this.buffer.slice(end);
    if (!sentence) return;
    into.push(sentence);
    this.emitted = true;
  }
}

/** Splits a stream of text pieces into sentences, as SentenceSplitter does. */
export async function* splitSentences(pieces: AsyncIterable<string>, options?: SentenceSplitterOptions): AsyncIterable<string> {
  const splitter = new SentenceSplitter(options);
  for await (const piece of pieces) yield* splitter.push(piece);
  yield* splitter.flush();
}

function sentenceEnd(text: string): End {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\n") {
      if (text.slice(0, i).trim()) return i + 1;
      continue;
    }
    if (!TERMINATORS.includes(ch)) continue;
    let afterRun = i + 1;
    while (afterRun < text.length && TERMINATORS.includes(text[afterRun]!)) afterRun++;
    let end = afterRun;
    while (end < text.length && CLOSERS.includes(text[end]!)) end++;
    if (end === text.length) return undefined;
    if (!/\s/.test(text[end]!)) {
      i = end - 1;
      continue;
    }
    let next = end;
    while (next < text.length && /\s/.test(text[next]!)) next++;
    if (text.slice(end, next).includes("\n")) return end;
    if (next === text.length) return undefined;
    if (endsSentence(text, i, afterRun, next)) return end;
    i = next - 1;
  }
  return undefined;
}

/** The terminator run `text[run..afterRun)` is followed by white space, then `text[next]`. */
function endsSentence(text: string, run: number, afterRun: number, next: number): boolean {
  if (/\p{Ll}/u.test(text[next]!)) return false;
  if (afterRun - run > 1 || text[run] !== ".") return true;
  const before = text.slice(0, run);
  const word = before.slice(before.search(/\S*$/)).replace(OPENERS, "");
  if (NON_FINAL.has(word.toLowerCase())) return false;
  if (/^\p{Lu}$/u.test(word)) return false;
  return !/^\d+$/.test(before.trim());
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The end of the last clause (after `,`, `;` or `:` and white space), if any. */
function lastClauseEnd(text: string): End {
  let end: End;
  for (const match of text.matchAll(CLAUSE_END)) end = match.index + match[0].length;
  return end;
}
