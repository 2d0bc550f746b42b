import { decodeEntities } from "./html-entities.js";
import { normaliseNewlines, ParagraphBuilder } from "./text-paragraphs.js";

/*
 * The words a reader of rendered Markdown sees: headings' text, paragraphs, list items, table
 * cells, link text (not URLs), code; images, HTML comments, raw HTML's hidden parts and front
 * matter dropped. A small line-by-line parser of the common forms, not full CommonMark: every
 * search looks forward only, through memoised "next index" scanners, so the work stays linear
 * in the size of the text whatever the text is (no regular expression runs on untrusted text
 * except anchored ones over a bounded prefix of a line).
 */

/**
 * The index of the next character at or after `from` that `matches`, or the text's length.
 * Remembers its last answer, so queries whose `from` never decreases (as every call site here
 * guarantees) scan each character at most once in total.
 */
class NextIndex {
  #lastFrom = 1;
  #lastResult = 0;

  constructor(
    private readonly text: string,
    private readonly matches: (code: number) => boolean,
  ) {}

  from(from: number): number {
    if (from >= this.#lastFrom && from <= this.#lastResult) return this.#lastResult;
    let i = from;
    while (i < this.text.length && !this.matches(this.text.charCodeAt(i))) i++;
    this.#lastFrom = from;
    this.#lastResult = i;
    return i;
  }
}

const isWhitespace = (code: number): boolean => code === 32 || code === 9 || code === 10;
const isNotWhitespace = (code: number): boolean => !isWhitespace(code);
const is = (char: string) => {
  const wanted = char.charCodeAt(0);
  return (code: number): boolean => code === wanted;
};

/** ASCII punctuation: what a backslash escapes. */
function isPunctuation(code: number): boolean {
  return (code >= 33 && code <= 47) || (code >= 58 && code <= 64) || (code >= 91 && code <= 96) || (code >= 123 && code <= 126);
}

function isAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code > 127;
}

/** How reference-link labels compare: case and runs of whitespace do not matter. */
function labelKey(label: string): string {
  return label.trim().replace(/\s+/g, " ").toLowerCase();
}

/** CommonMark's limit on a link label: also what keeps the label look-ups bounded. */
const MAX_LABEL = 999;

/** Scanners for what follows a link's destination: spaces, an optional title in "", '' or (), spaces. */
function linkTailScanners(source: string) {
  return {
    afterDestination: new NextIndex(source, isNotWhitespace),
    titleEnds: { '"': new NextIndex(source, is('"')), "'": new NextIndex(source, is("'")), "(": new NextIndex(source, is(")")) },
    afterTitle: { '"': new NextIndex(source, isNotWhitespace), "'": new NextIndex(source, isNotWhitespace), "(": new NextIndex(source, isNotWhitespace) },
  };
}

/** An inline run of Markdown (a paragraph, heading, list item or cell) as the text a reader sees. */
function inlineText(source: string, labels: ReadonlySet<string>): string {
  const out: string[] = [];
  /** Open `[` or `![`: where its marker sits in `out` and in the source. */
  const brackets: { out: number; source: number; image: boolean }[] = [];
  // One scanner per call site: each site's `from` only grows, which keeps each linear.
  const afterParen = new NextIndex(source, isNotWhitespace);
  const destinationSpace = new NextIndex(source, isWhitespace);
  const destinationParen = new NextIndex(source, is(")"));
  const destinationAngle = new NextIndex(source, is(">"));
  // Destinations in <...> end elsewhere than bare ones: each kind gets its own scanners for what follows.
  const plainTail = linkTailScanners(source);
  const angleTail = linkTailScanners(source);
  const referenceEnd = new NextIndex(source, is("]"));
  const tagEnd = new NextIndex(source, is(">"));
  const lineEnd = new NextIndex(source, is("\n"));
  let codeRuns: Map<number, { starts: number[]; next: number }> | undefined;

  let plainStart = 0;
  const flushPlain = (end: number): void => {
    if (end > plainStart) out.push(decodeEntities(source.slice(plainStart, end)));
  };

  /** Where the inline link's `(destination "title")` starting at `open` ends (just past `)`), or -1. */
  const inlineLinkEnd = (open: number): number => {
    let j = afterParen.from(open + 1);
    let tail = plainTail;
    if (source.charCodeAt(j) === 60 /* < */) {
      j = destinationAngle.from(j + 1) + 1;
      tail = angleTail;
    } else j = Math.min(destinationSpace.from(j), destinationParen.from(j));
    if (j > source.length) return -1;
    j = tail.afterDestination.from(j);
    const quote = source[j];
    if (quote === '"' || quote === "'" || quote === "(") {
      const close = tail.titleEnds[quote].from(j + 1);
      if (close >= source.length) return -1;
      j = tail.afterTitle[quote].from(close + 1);
    }
    return source.charCodeAt(j) === 41 /* ) */ ? j + 1 : -1;
  };

  /** The end of the code span whose opening backtick run of `length` ends at `from`, or -1. */
  const closingRun = (from: number, length: number): number => {
    if (!codeRuns) {
      codeRuns = new Map();
      for (let k = 0; k < source.length; ) {
        if (source.charCodeAt(k) !== 96) {
          k++;
          continue;
        }
        const start = k;
        while (source.charCodeAt(k) === 96) k++;
        const runs = codeRuns.get(k - start) ?? { starts: [], next: 0 };
        runs.starts.push(start);
        codeRuns.set(k - start, runs);
      }
    }
    const runs = codeRuns.get(length);
    if (!runs) return -1;
    while (runs.next < runs.starts.length && runs.starts[runs.next]! < from) runs.next++;
    return runs.next < runs.starts.length ? runs.starts[runs.next]! : -1;
  };

  let i = 0;
  while (i < source.length) {
    const c = source.charCodeAt(i);
    if (c === 92 /* \ */ && isPunctuation(source.charCodeAt(i + 1))) {
      flushPlain(i);
      out.push(source[i + 1]!);
      plainStart = i += 2;
    } else if (c === 96 /* ` */) {
      flushPlain(i);
      let end = i;
      while (source.charCodeAt(end) === 96) end++;
      const close = closingRun(end, end - i);
      if (close === -1) {
        out.push(source.slice(i, end));
        plainStart = i = end;
      } else {
        out.push(source.slice(end, close));
        plainStart = i = close + (end - i);
      }
    } else if (c === 91 /* [ */ || (c === 33 /* ! */ && source.charCodeAt(i + 1) === 91)) {
      flushPlain(i);
      const image = c === 33;
      brackets.push({ out: out.length, source: i + (image ? 1 : 0), image });
      out.push(image ? "![" : "[");
      plainStart = i += image ? 2 : 1;
    } else if (c === 93 /* ] */ && brackets.length) {
      flushPlain(i);
      const opener = brackets.pop()!;
      let end = -1;
      if (source.charCodeAt(i + 1) === 40 /* ( */) end = inlineLinkEnd(i + 1);
      else if (source.charCodeAt(i + 1) === 91 /* [ */) {
        const close = referenceEnd.from(i + 2);
        if (close < source.length) end = close + 1;
      } else if (i - opener.source <= MAX_LABEL && labels.has(labelKey(source.slice(opener.source + 1, i)))) end = i + 1;
      if (end === -1) {
        out.push("]");
        plainStart = i += 1;
      } else {
        // A link keeps its text; an image goes with its alt text.
        if (opener.image) out.length = opener.out;
        else out[opener.out] = "";
        plainStart = i = end;
      }
    } else if (c === 60 /* < */) {
      const next = source.charCodeAt(i + 1);
      const close = tagEnd.from(i + 1);
      // A tag ends on its own line: a stray "<b" must not swallow the text up to some later ">".
      if ((next === 47 || (next >= 65 && next <= 90) || (next >= 97 && next <= 122)) && close < lineEnd.from(i + 1)) {
        flushPlain(i);
        const inner = source.slice(i + 1, close);
        // An autolink shows its address; any other tag shows nothing.
        if (/^[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*$|^[^\s<>@]+@[^\s<>@]+$/.test(inner)) out.push(inner);
        plainStart = i = close + 1;
      } else i++;
    } else if (c === 42 /* * */ || c === 95 /* _ */ || c === 126 /* ~ */) {
      let end = i;
      while (source.charCodeAt(end) === c) end++;
      const before = i > 0 ? source.charCodeAt(i - 1) : 32;
      const after = end < source.length ? source.charCodeAt(end) : 32;
      const spaced = isWhitespace(before) && isWhitespace(after);
      const intraword = isAlphanumeric(before) && isAlphanumeric(after);
      // Emphasis markers vanish; a lone `*` between spaces, snake_case and a single ~ stay.
      const marker = !spaced && !(c === 95 && intraword) && !(c === 126 && end - i < 2);
      if (marker) {
        flushPlain(i);
        plainStart = end;
      }
      i = end;
    } else i++;
  }
  flushPlain(source.length);
  return out.join("");
}

/** A line's leading spaces (tabs count as up to four). */
function indentOf(line: string): number {
  let n = 0;
  for (const ch of line) {
    if (ch === " ") n++;
    else if (ch === "\t") n += 4 - (n % 4);
    else break;
  }
  return n;
}

/** Drops HTML comments and the script and style elements of raw HTML in the Markdown: a reader never sees them. */
function withoutHiddenHtml(markdown: string): string {
  let out = "";
  let copied = 0;
  const lower = markdown.toLowerCase();
  let lt = markdown.indexOf("<");
  while (lt !== -1) {
    let end = -1;
    if (markdown.startsWith("<!--", lt)) {
      const close = markdown.indexOf("-->", lt + 4);
      end = close === -1 ? markdown.length : close + 3;
    } else {
      for (const name of ["script", "style"]) {
        if (lower.startsWith(name, lt + 1) && !/[a-z0-9-]/.test(lower[lt + 1 + name.length] ?? "")) {
          const close = lower.indexOf(`</${name}`, lt);
          const gt = close === -1 ? -1 : lower.indexOf(">", close);
          end = gt === -1 ? markdown.length : gt + 1;
        }
      }
    }
    if (end !== -1) {
      out += markdown.slice(copied, lt);
      // Keeps the line structure so the blocks around the element are unchanged.
      if (markdown.slice(lt, end).includes("\n")) out += "\n";
      copied = end;
      lt = markdown.indexOf("<", end);
    } else lt = markdown.indexOf("<", lt + 1);
  }
  return out + markdown.slice(copied);
}

/** Front matter (YAML `---` or TOML `+++` fenced, at the very start) removed. */
function withoutFrontMatter(markdown: string): string {
  const fence = markdown.startsWith("---\n") ? "---" : markdown.startsWith("+++\n") ? "+++" : undefined;
  if (!fence) return markdown;
  let at = markdown.indexOf(`\n${fence}`, 3);
  while (at !== -1) {
    const after = at + 1 + fence.length;
    if (after === markdown.length || markdown[after] === "\n") return markdown.slice(after + 1);
    at = markdown.indexOf(`\n${fence}`, after);
  }
  return markdown;
}

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
const TASK_BOX = /^\[[ xX]\][ \t]+/;
const REFERENCE_DEFINITION = /^ {0,3}\[([^\]]{1,999})\]:[ \t]*\S/;
const BLOCKQUOTE = /^ {0,3}>[ \t]?/;

/** A line of three or more of one of `-*_` (spaces allowed): a thematic break. */
function isThematicBreak(line: string): boolean {
  let marker = "";
  let count = 0;
  for (const ch of line) {
    if (ch === " " || ch === "\t") continue;
    if (ch !== "-" && ch !== "*" && ch !== "_") return false;
    if (marker && ch !== marker) return false;
    marker = ch;
    count++;
  }
  return count >= 3;
}

/** `===` (or `---`) under a paragraph line: a setext heading's underline. */
function isSetextUnderline(line: string): boolean {
  const trimmed = line.trim();
  if (!trimmed || indentOf(line) > 3) return false;
  const ch = trimmed[0];
  if (ch !== "=" && ch !== "-") return false;
  for (const c of trimmed) if (c !== ch) return false;
  return true;
}

/** The line that ends a fenced code block opened by `fence`: the same character, at least as many, nothing else. */
function isClosingFence(line: string, fence: { char: string; length: number }): boolean {
  const trimmed = line.trim();
  if (indentOf(line) > 3 || trimmed.length < fence.length) return false;
  for (const ch of trimmed) if (ch !== fence.char) return false;
  return true;
}

/** A table's delimiter row (`| --- | :-: |`). */
function isTableDelimiter(line: string): boolean {
  let dash = false;
  let pipe = false;
  for (const ch of line) {
    if (ch === "-") dash = true;
    else if (ch === "|") pipe = true;
    else if (ch !== ":" && ch !== " " && ch !== "\t") return false;
  }
  return dash && pipe;
}

/** A table row's cells, split on unescaped `|`, outer pipes dropped. */
function tableCells(line: string): string[] {
  const cells: string[] = [];
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "\\") i++;
    else if (line[i] === "|") {
      cells.push(line.slice(start, i));
      start = i + 1;
    }
  }
  cells.push(line.slice(start));
  if (cells[0]?.trim() === "") cells.shift();
  if (cells.length && cells[cells.length - 1]!.trim() === "") cells.pop();
  return cells;
}

/** The text a reader sees in `markdown`, in the common paragraph shape. */
export function markdownText(markdown: string): string {
  const lines = withoutHiddenHtml(withoutFrontMatter(normaliseNewlines(markdown))).split("\n");
  const labels = new Set<string>();
  for (const line of lines) {
    const definition = REFERENCE_DEFINITION.exec(line.slice(0, 1100));
    if (definition) labels.add(labelKey(definition[1]!));
  }

  const out = new ParagraphBuilder();
  /** The paragraph or list item being gathered (its soft-wrapped lines), written when it ends. */
  let unit: string[] = [];
  let unitIsParagraph = false;
  const endUnit = (): void => {
    if (unit.length) out.text(inlineText(unit.join("\n"), labels));
    unit = [];
    unitIsParagraph = false;
  };
  let fence: { char: string; length: number } | undefined;

  for (let line of lines) {
    if (fence) {
      if (isClosingFence(line, fence)) {
        fence = undefined;
        out.paragraphBreak();
      } else {
        out.text(line);
        out.lineBreak();
      }
      continue;
    }
    // Quoted lines read as their content.
    for (let quote = BLOCKQUOTE.exec(line.slice(0, 8)); quote; quote = BLOCKQUOTE.exec(line.slice(0, 8))) line = line.slice(quote[0].length);
    const head = line.slice(0, 64);
    if (!line.trim()) {
      endUnit();
      out.paragraphBreak();
      continue;
    }
    const opening = FENCE.exec(head);
    if (opening) {
      endUnit();
      out.paragraphBreak();
      fence = { char: opening[1]![0]!, length: opening[1]!.length };
      continue;
    }
    const heading = ATX_HEADING.exec(head);
    if (heading) {
      endUnit();
      out.paragraphBreak();
      let text = line.slice(heading[0].length).trimEnd();
      // A closing run of #s (after a space) is not part of the heading.
      let end = text.length;
      while (end > 0 && text[end - 1] === "#") end--;
      if (end === 0 || text[end - 1] === " " || text[end - 1] === "\t") text = text.slice(0, end);
      out.text(inlineText(text, labels));
      out.paragraphBreak();
      continue;
    }
    if (unitIsParagraph && isSetextUnderline(line)) {
      // The gathered paragraph was a heading: it stands alone.
      out.paragraphBreak();
      endUnit();
      out.paragraphBreak();
      continue;
    }
    if (isThematicBreak(line)) {
      endUnit();
      out.paragraphBreak();
      continue;
    }
    if (REFERENCE_DEFINITION.test(line.slice(0, 1100))) {
      endUnit();
      continue;
    }
    const item = LIST_ITEM.exec(head);
    if (item) {
      endUnit();
      out.lineBreak();
      const rest = line.slice(item[0].length);
      unit.push(rest.replace(TASK_BOX, ""));
      continue;
    }
    const trimmed = line.trim();
    if (trimmed.includes("|") && isTableDelimiter(trimmed)) continue;
    if (trimmed.startsWith("|")) {
      endUnit();
      out.lineBreak();
      out.text(tableCells(trimmed).map((cell) => inlineText(cell.trim(), labels)).join(" | "));
      out.lineBreak();
      continue;
    }
    if (!unit.length) {
      unitIsParagraph = true;
      out.paragraphBreak();
    }
    unit.push(line);
  }
  endUnit();
  return out.toString();
}
