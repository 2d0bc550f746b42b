import { decodeEntities } from "./html-entities.js";
import { ParagraphBuilder } from "./text-paragraphs.js";

/*
 * The visible text of an HTML page, by one left-to-right scan (no DOM, no backtracking): tags
 * are read for their names only, the contents of elements a reader never sees are skipped,
 * block-level elements break paragraphs.
 */

/** Elements whose content is not shown: skipped up to their end tag (or to the end of the page). */
const HIDDEN = new Set(["script", "style", "noscript", "template", "title", "iframe", "noembed", "noframes", "textarea"]);

/** Elements that begin and end a paragraph. */
const BLOCKS = new Set([
  "address", "article", "aside", "blockquote", "body", "br", "caption", "center", "dd", "details", "dialog", "dir", "div", "dl", "dt",
  "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend",
  "li", "main", "menu", "nav", "ol", "option", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
]);

/** Table cells sit side by side: a space between them, not a paragraph break. */
const CELLS = new Set(["td", "th"]);

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isNameChar(code: number): boolean {
  return isLetter(code) || (code >= 48 && code <= 57) || code === 45 /* - */ || code === 58 /* : */;
}

/** Index just past the `>` ending the tag whose name ends at `from`, skipping quoted attribute values; the text's length when it never ends (the rest is inside the tag). */
function tagEnd(html: string, from: number): number {
  let quote = 0;
  for (let i = from; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (quote) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) {
      // A quote opens a value only after `=` (possibly spaced): elsewhere it is a stray character.
      let j = i - 1;
      while (j >= from && html.charCodeAt(j) <= 32) j--;
      if (html.charCodeAt(j) === 61 /* = */) quote = c;
    } else if (c === 62 /* > */) return i + 1;
  }
  return html.length;
}

/** The visible text of `html`, in the common paragraph shape. */
export function htmlText(html: string): string {
  // Lower-cased once so end tags of skipped elements can be found with indexOf.
  const lower = html.toLowerCase();
  const out = new ParagraphBuilder();
  let pre = 0;
  let i = 0;
  const emit = (text: string): void => {
    if (!text) return;
    const decoded = decodeEntities(text);
    if (pre === 0) out.text(decoded);
    else {
      // Inside <pre> the page's own line breaks are shown.
      const lines = decoded.split("\n");
      lines.forEach((line, n) => {
        if (n > 0) out.lineBreak();
        out.text(line);
      });
    }
  };
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt === -1) {
      emit(html.slice(i));
      break;
    }
    emit(html.slice(i, lt));
    const next = html.charCodeAt(lt + 1);
    if (html.startsWith("<!--", lt)) {
      const close = html.indexOf("-->", lt + 4);
      i = close === -1 ? html.length : close + 3;
      continue;
    }
    if (next === 33 /* ! */ || next === 63 /* ? */) {
      // Doctype, CDATA, processing instruction: nothing a reader sees.
      const close = html.indexOf(">", lt + 2);
      i = close === -1 ? html.length : close + 1;
      continue;
    }
    const closing = next === 47; /* / */
    const nameStart = lt + (closing ? 2 : 1);
    if (!isLetter(html.charCodeAt(nameStart))) {
      // "a < b" or "</ >": text, as a browser shows it.
      emit("<");
      i = lt + 1;
      continue;
    }
    let nameEnd = nameStart + 1;
    while (nameEnd < html.length && isNameChar(html.charCodeAt(nameEnd))) nameEnd++;
    const name = lower.slice(nameStart, nameEnd);
    i = tagEnd(html, nameEnd);
    if (!closing && HIDDEN.has(name)) {
      const selfClosed = html.charCodeAt(i - 2) === 47 && name !== "script" && name !== "style";
      if (!selfClosed) {
        const end = lower.indexOf(`</${name}`, i);
        i = end === -1 ? html.length : tagEnd(html, end + 2 + name.length);
      }
      continue;
    }
    if (name === "pre") pre = Math.max(0, pre + (closing ? -1 : 1));
    if (CELLS.has(name)) out.text(" ");
    else if (BLOCKS.has(name)) out.paragraphBreak();
  }
  return out.toString();
}
