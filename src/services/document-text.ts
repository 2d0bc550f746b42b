import { DocumentTextError } from "./document-text-error.js";
import { htmlText } from "./html-text.js";
import { markdownText } from "./markdown-text.js";
import { pdfText } from "./pdf-text.js";
import { normaliseNewlines, normaliseParagraphs } from "./text-paragraphs.js";

/*
 * Text out of a knowledge-base document (issue 31): what a reader of the document sees, in one
 * shape for every type (paragraphs separated by blank lines, whitespace normalised), ready to be
 * cut into passages for search. Every extractor here reads untrusted input in linear time.
 */

export { DocumentTextError } from "./document-text-error.js";
export { DEFAULT_PASSAGE_CHARS, splitPassages } from "./passages.js";
export { MAX_PDF_PAGES } from "./pdf-text.js";

/** The content types a knowledge-base document may have. */
export const DOCUMENT_TYPES = ["text/plain", "text/markdown", "text/html", "application/pdf"] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** UTF-8 with a leading byte-order mark dropped and invalid bytes replaced by U+FFFD. */
function utf8(bytes: Buffer): string {
  return new TextDecoder("utf-8", { fatal: false, ignoreBOM: false }).decode(bytes);
}

/** The document's text: paragraphs separated by blank lines, markup removed, whitespace normalised. */
export async function documentText(bytes: Buffer, type: DocumentType): Promise<string> {
  let text: string;
  switch (type) {
    case "text/plain":
      text = normaliseParagraphs(normaliseNewlines(utf8(bytes)));
      break;
    case "text/markdown":
      text = markdownText(utf8(bytes));
      break;
    case "text/html":
      text = htmlText(utf8(bytes));
      break;
    case "application/pdf":
      return pdfText(bytes);
    default:
      throw new DocumentTextError(`the document type is not accepted; use one of ${DOCUMENT_TYPES.join(", ")}`);
  }
  if (!/[\p{L}\p{N}]/u.test(text)) throw new DocumentTextError("the document has no text");
  return text;
}
