import { DocumentTextError } from "./document-text-error.js";
import { collapseLine } from "./text-paragraphs.js";

/*
 * The text of a PDF's pages through unpdf (a serverless build of Mozilla's pdf.js, in this
 * process, no worker, nothing fetched: no standard font or CMap files are configured, so CJK
 * text set in a predefined CMap may read as nothing). Lines come as pdf.js orders a page's text
 * items; a vertical gap clearly larger than the page's usual line spacing starts a paragraph.
 */

/** More pages than this and the document is refused. */
export const MAX_PDF_PAGES = 300;

/** A gap this many times the page's usual line spacing (or more) separates paragraphs. */
const PARAGRAPH_GAP = 1.4;

interface PdfLine {
  text: string;
  /** The baseline's height on the page (PDF units, up is larger). */
  y: number;
}

/** pdf.js's text item, as far as this reads it. */
interface TextItemLike {
  str?: unknown;
  transform?: unknown;
  hasEOL?: unknown;
}

function linesOf(items: readonly TextItemLike[]): PdfLine[] {
  const lines: PdfLine[] = [];
  let text = "";
  let y: number | undefined;
  const end = (): void => {
    if (text.trim() && y !== undefined) lines.push({ text: collapseLine(text), y });
    text = "";
    y = undefined;
  };
  for (const item of items) {
    // Marked-content items carry no `str`.
    if (typeof item.str !== "string") continue;
    const itemY = Array.isArray(item.transform) && typeof item.transform[5] === "number" ? item.transform[5] : undefined;
    if (y === undefined && item.str.trim()) y = itemY;
    text += item.str;
    if (item.hasEOL === true) end();
  }
  end();
  return lines;
}

/** The lower quartile: a page's usual line spacing even when most of its paragraphs are one line long. */
function lowerQuartile(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 4)] ?? 0;
}

/** Ends in a letter and a hyphen (checked on the last two characters only: paragraphs can be long). */
function endsHyphenated(text: string): boolean {
  return text.endsWith("-") && /\p{L}/u.test(text.slice(-2, -1));
}

/** A page's lines gathered into paragraphs (lines of one paragraph joined by spaces). */
function pageParagraphs(lines: PdfLine[]): string[] {
  const gaps: number[] = [];
  for (let k = 1; k < lines.length; k++) {
    const gap = lines[k - 1]!.y - lines[k]!.y;
    if (gap > 0) gaps.push(gap);
  }
  const usual = lowerQuartile(gaps);
  const paragraphs: string[] = [];
  let current = "";
  lines.forEach((line, k) => {
    const gap = k === 0 ? 0 : lines[k - 1]!.y - line.y;
    // Up the page (a new column or a header) or a wide gap: a new paragraph.
    const breaks = k > 0 && (gap <= 0 || (usual > 0 && gap > usual * PARAGRAPH_GAP));
    if (breaks && current) {
      paragraphs.push(current);
      current = "";
    }
    // A word hyphenated across lines is rejoined without a space; the hyphen stays.
    current = !current ? line.text : endsHyphenated(current) ? current + line.text : `${current} ${line.text}`;
  });
  if (current) paragraphs.push(current);
  return paragraphs;
}

/** The text of every page of `bytes`, paragraphs separated by blank lines. */
export async function pdfText(bytes: Buffer): Promise<string> {
  // Loaded on first use: pdf.js is 2 MB of code that only PDF uploads need.
  const { getDocumentProxy } = await import("unpdf");
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: pdf.js takes over (detaches) the buffer it is given.
    document = await getDocumentProxy(new Uint8Array(bytes), {
      isEvalSupported: false,
      useSystemFonts: false,
      disableFontFace: true,
      enableXfa: false,
      verbosity: 0,
    });
  } catch (error) {
    if (error instanceof Error && error.name === "PasswordException") throw new DocumentTextError("the PDF is password-protected; upload it without a password");
    throw new DocumentTextError("the file could not be read as a PDF");
  }
  try {
    if (document.numPages > MAX_PDF_PAGES) throw new DocumentTextError(`the PDF has ${document.numPages} pages; at most ${MAX_PDF_PAGES} are accepted`);
    const paragraphs: string[] = [];
    for (let number = 1; number <= document.numPages; number++) {
      let items: TextItemLike[];
      try {
        const page = await document.getPage(number);
        items = (await page.getTextContent()).items as TextItemLike[];
        page.cleanup();
      } catch {
        throw new DocumentTextError(`page ${number} of the PDF could not be read`);
      }
      paragraphs.push(...pageParagraphs(linesOf(items)));
    }
    const text = paragraphs.join("\n\n");
    if (!/[\p{L}\p{N}]/u.test(text)) throw new DocumentTextError("no text could be read from the PDF (scanned pages are images, and Parley does not read text from images)");
    return text;
  } finally {
    await document.destroy();
  }
}
