/*
 * The shape every extractor's text ends in: paragraphs separated by one blank line, lines of a
 * paragraph by one newline, each line trimmed with its runs of whitespace (and control
 * characters) made one space. Written as plain loops: the text comes from untrusted documents.
 */

/** Line feeds only: CRLF and lone CR become LF. */
export function normaliseNewlines(text: string): string {
  return text.indexOf("\r") === -1 ? text : text.replace(/\r\n?/g, "\n");
}

/** Whitespace (including no-break and other Unicode spaces) and control characters, all of which collapse to one space inside a line. */
function isSpaceLike(code: number): boolean {
  if (code <= 0x20 || (code >= 0x7f && code <= 0xa0)) return true;
  return (
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200b) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** One line with its whitespace runs made single spaces, trimmed. */
export function collapseLine(line: string): string {
  let out = "";
  let pendingSpace = false;
  let start = -1;
  for (let i = 0; i < line.length; i++) {
    if (isSpaceLike(line.charCodeAt(i))) {
      if (start !== -1) {
        out += (pendingSpace ? " " : "") + line.slice(start, i);
        start = -1;
        pendingSpace = true;
      }
    } else if (start === -1) start = i;
  }
  if (start !== -1) out += (pendingSpace ? " " : "") + line.slice(start);
  return out;
}

/** Text with LF line ends (see normaliseNewlines) in the common shape: blank lines separate paragraphs, other line breaks are kept. */
export function normaliseParagraphs(text: string): string {
  const paragraphs: string[] = [];
  let lines: string[] = [];
  for (const raw of text.split("\n")) {
    const line = collapseLine(raw);
    if (line) lines.push(line);
    else if (lines.length) {
      paragraphs.push(lines.join("\n"));
      lines = [];
    }
  }
  if (lines.length) paragraphs.push(lines.join("\n"));
  return paragraphs.join("\n\n");
}

/**
 * Builds text block by block for the markup extractors: `text` adds inline text, `lineBreak`
 * ends a line inside the paragraph, `paragraphBreak` ends the paragraph. Consecutive breaks
 * merge; `toString` gives the normalised text.
 */
export class ParagraphBuilder {
  #parts: string[] = [];

  text(text: string): void {
    // A newline inside inline text is a soft wrap: it reads as a space.
    if (text) this.#parts.push(text.indexOf("\n") === -1 ? text : text.replaceAll("\n", " "));
  }

  lineBreak(): void {
    if (!this.#endsWithBreak()) this.#parts.push("\n");
  }

  paragraphBreak(): void {
    if (this.#endsWithBreak()) this.#parts[this.#parts.length - 1] = "\n\n";
    else this.#parts.push("\n\n");
  }

  #endsWithBreak(): boolean {
    const last = this.#parts[this.#parts.length - 1];
    return last === "\n" || last === "\n\n";
  }

  toString(): string {
    return normaliseParagraphs(this.#parts.join(""));
  }
}
