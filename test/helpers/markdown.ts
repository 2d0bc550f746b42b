import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Just enough Markdown reading for the documentation tests: the project's pages, their
 * headings as GitHub makes anchors of them, their links, and their tables.
 */

/** README.md and every page under docs/, as paths relative to `root`. */
export function documentationPages(root: string): string[] {
  const docs = readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

export function readPage(root: string, page: string): string {
  return readFileSync(path.join(root, page), "utf8");
}

/** The page's lines outside fenced code blocks (a `#` or a link inside a block is code). */
export function proseLines(markdown: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line: i + 1, text });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text stays, its target goes
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a page's headings make, with GitHub's -1, -2 suffixes for repeated headings. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export interface MarkdownLink {
  line: number;
  target: string;
}

/** Inline links and images outside code (fenced blocks and `inline code`). */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const withoutCode = text.replace(/`[^`]*`/g, "``");
    for (const match of withoutCode.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line, target: match[1]! });
    }
  }
  return links;
}

/**
 * The rows of every table whose header row starts with `firstHeader` (case-insensitive), as
 * arrays of trimmed cells; the header and the divider row are left out.
 */
export function tableRows(markdown: string, firstHeader: string): Array<{ line: number; cells: string[] }> {
  const rows: Array<{ line: number; cells: string[] }> = [];
  const lines = proseLines(markdown);
  let inTable = false;
  for (const { line, text } of lines) {
    if (!text.trim().startsWith("|")) {
      inTable = false;
      continue;
    }
    const cells = splitRow(text);
    if (!inTable && cells[0]?.toLowerCase() === firstHeader.toLowerCase()) {
      inTable = true;
      continue;
    }
    if (!inTable || cells.every((cell) => /^:?-+:?$/.test(cell))) continue;
    rows.push({ line, cells });
  }
  return rows;
}

/** A table row's cells; `\|` inside a cell is a literal bar. */
function splitRow(row: string): string[] {
  const inner = row.trim().replace(/^\|/, "").replace(/\|$/, "");
  return inner.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}
