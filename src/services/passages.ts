import { normaliseNewlines, normaliseParagraphs } from "./text-paragraphs.js";

/*
 * Cutting a document's text into passages for full-text search: each passage is what a search
 * hit hands the agent, so it should be a readable whole (paragraphs, then sentences) that says
 * what it is about (its heading goes with it).
 */

/** Passage length when the caller names none. */
export const DEFAULT_PASSAGE_CHARS = 800;

/** A piece of a paragraph too long for one passage, and what joins it to the piece before. */
interface Piece {
  text: string;
  separator: "" | " " | "\n";
}

/** Ends a sentence when a space follows: `.`, `!`, `?` and the quotes or brackets closing them. */
function isSentenceEnd(text: string, k: number): boolean {
  let j = k;
  while (j >= 0 && `"')]}”’»`.includes(text[j]!)) j--;
  return j >= 0 && ".!?…".includes(text[j]!);
}

/** `word` cut into parts of at most `limit` characters, never between the halves of a surrogate pair. */
function hardCut(word: string, limit: number): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < word.length) {
    let end = Math.min(word.length, start + limit);
    const code = word.charCodeAt(end - 1);
    if (end < word.length && code >= 0xd800 && code <= 0xdbff && end - start > 1) end--;
    parts.push(word.slice(start, end));
    start = end;
  }
  return parts;
}

/** A sentence longer than `limit` as word-aligned pieces (only a word longer than `limit` is cut inside). */
function wordPieces(sentence: string, limit: number, separator: Piece["separator"]): Piece[] {
  const pieces: Piece[] = [];
  let current = "";
  let currentSeparator = separator;
  for (const word of sentence.split(" ")) {
    if (!current) current = word;
    else if (current.length + 1 + word.length <= limit) current += ` ${word}`;
    else {
      pieces.push({ text: current, separator: currentSeparator });
      current = word;
      currentSeparator = " ";
    }
    if (current.length > limit) {
      const parts = hardCut(current, limit);
      parts.slice(0, -1).forEach((part, n) => pieces.push({ text: part, separator: n === 0 ? currentSeparator : "" }));
      current = parts[parts.length - 1]!;
      currentSeparator = "";
    }
  }
  if (current) pieces.push({ text: current, separator: currentSeparator });
  return pieces;
}

/** A paragraph as sentences (at line breaks too), each at most `limit` characters. */
function paragraphPieces(paragraph: string, limit: number): Piece[] {
  const pieces: Piece[] = [];
  paragraph.split("\n").forEach((line, n) => {
    let separator: Piece["separator"] = n === 0 ? " " : "\n";
    let start = 0;
    for (let k = 0; k <= line.length; k++) {
      if (k < line.length && !(line[k] === " " && isSentenceEnd(line, k - 1))) continue;
      const sentence = line.slice(start, k);
      start = k + 1;
      if (!sentence) continue;
      if (sentence.length <= limit) pieces.push({ text: sentence, separator });
      else pieces.push(...wordPieces(sentence, limit, separator));
      separator = " ";
    }
  });
  return pieces;
}

/**
 * The text cut into passages for search: whole paragraphs where they fit, each at most
 * `maxChars` (default 800), long paragraphs cut at sentence ends, never mid-word (a single
 * word longer than a passage excepted); headings kept with the passage that follows them;
 * empty passages dropped. A heading is a paragraph of one short line not ending as a
 * sentence does: extraction leaves no markup to tell.
 */
export function splitPassages(text: string, maxChars: number = DEFAULT_PASSAGE_CHARS): string[] {
  if (!Number.isInteger(maxChars) || maxChars < 20) throw new RangeError("maxChars must be an integer of at least 20");
  // Headings carried to a new passage take at most half of it; pieces of a long paragraph the
  // rest, so carried headings and the first piece always fit together.
  const headingRoom = Math.floor(maxChars / 2) - 2;
  const pieceLimit = maxChars - headingRoom - 2;
  const isHeading = (paragraph: string): boolean =>
    paragraph.length <= Math.min(120, headingRoom) && !paragraph.includes("\n") && !/[.!?;,…]["')\]”’»]*$/.test(paragraph);

  const passages: string[] = [];
  let current = "";
  /** Where the run of headings ending `current` starts, or -1 when it does not end with one. */
  let headingsFrom = -1;
  const fits = (piece: string, separator: string): boolean => (current ? current.length + separator.length : 0) + piece.length <= maxChars;
  const append = (piece: string, separator: string): void => {
    current = current ? current + separator + piece : piece;
  };
  /** Ends the passage; its closing headings open the next one (when they leave it room). */
  const endPassage = (): void => {
    const carry = headingsFrom !== -1 && current.length - headingsFrom <= headingRoom;
    const body = carry ? current.slice(0, headingsFrom).trimEnd() : current;
    if (body) passages.push(body);
    current = carry ? current.slice(headingsFrom) : "";
    headingsFrom = carry ? 0 : -1;
  };
  const appendParagraph = (paragraph: string): void => {
    const heading = isHeading(paragraph);
    if (heading && headingsFrom === -1) headingsFrom = current ? current.length + 2 : 0;
    if (!heading) headingsFrom = -1;
    append(paragraph, "\n\n");
  };

  for (const paragraph of normaliseParagraphs(normaliseNewlines(text)).split("\n\n")) {
    if (!paragraph) continue;
    if (fits(paragraph, "\n\n")) {
      appendParagraph(paragraph);
      continue;
    }
    endPassage();
    if (fits(paragraph, "\n\n")) {
      appendParagraph(paragraph);
      continue;
    }
    paragraphPieces(paragraph, pieceLimit).forEach((piece, n) => {
      const separator = n === 0 ? "\n\n" : piece.separator;
      if (!fits(piece.text, separator)) {
        passages.push(current);
        current = "";
      }
      append(piece.text, separator);
    });
    headingsFrom = -1;
  }
  if (current) passages.push(current);
  return passages;
}
