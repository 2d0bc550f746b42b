/*
 * HTML character references: numeric ones and the named ones documents commonly use (the
 * markup-significant, typographic and Latin-1 letters), not the full list of 2,000-odd.
 * An unknown name is left as written, as a browser does.
 */

const NAMED: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0", ensp: "\u2002", emsp: "\u2003", thinsp: "\u2009",
  shy: "", zwnj: "", zwj: "", lrm: "", rlm: "",
  copy: "©", reg: "®", trade: "™", hellip: "…", mdash: "—", ndash: "–", minus: "−",
  lsquo: "‘", rsquo: "’", sbquo: "‚", ldquo: "“", rdquo: "”", bdquo: "„", laquo: "«", raquo: "»", lsaquo: "‹", rsaquo: "›",
  bull: "•", middot: "·", deg: "°", prime: "′", Prime: "″", dagger: "†", Dagger: "‡", permil: "‰",
  euro: "€", pound: "£", yen: "¥", cent: "¢", curren: "¤", sect: "§", para: "¶",
  times: "×", divide: "÷", plusmn: "±", frac12: "½", frac14: "¼", frac34: "¾", sup1: "¹", sup2: "²", sup3: "³",
  micro: "µ", ordf: "ª", ordm: "º", not: "¬", macr: "¯", acute: "´", cedil: "¸", uml: "¨",
  iexcl: "¡", iquest: "¿", brvbar: "¦", larr: "←", rarr: "→", uarr: "↑", darr: "↓", harr: "↔",
  le: "≤", ge: "≥", ne: "≠", asymp: "≈", infin: "∞", check: "✓",
  Agrave: "À", Aacute: "Á", Acirc: "Â", Atilde: "Ã", Auml: "Ä", Aring: "Å", AElig: "Æ", Ccedil: "Ç",
  Egrave: "È", Eacute: "É", Ecirc: "Ê", Euml: "Ë", Igrave: "Ì", Iacute: "Í", Icirc: "Î", Iuml: "Ï",
  ETH: "Ð", Ntilde: "Ñ", Ograve: "Ò", Oacute: "Ó", Ocirc: "Ô", Otilde: "Õ", Ouml: "Ö", Oslash: "Ø",
  Ugrave: "Ù", Uacute: "Ú", Ucirc: "Û", Uuml: "Ü", Yacute: "Ý", THORN: "Þ", szlig: "ß",
  agrave: "à", aacute: "á", acirc: "â", atilde: "ã", auml: "ä", aring: "å", aelig: "æ", ccedil: "ç",
  egrave: "è", eacute: "é", ecirc: "ê", euml: "ë", igrave: "ì", iacute: "í", icirc: "î", iuml: "ï",
  eth: "ð", ntilde: "ñ", ograve: "ò", oacute: "ó", ocirc: "ô", otilde: "õ", ouml: "ö", oslash: "ø",
  ugrave: "ù", uacute: "ú", ucirc: "û", uuml: "ü", yacute: "ý", thorn: "þ", yuml: "ÿ",
  OElig: "Œ", oelig: "œ", Scaron: "Š", scaron: "š", Yuml: "Ÿ", fnof: "ƒ",
};

/** Longest name looked at after `&` (every name above fits): bounds the lookahead. */
const MAX_NAME = 8;

function isAlnum(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isDigit(code: number, hex: boolean): boolean {
  if (code >= 48 && code <= 57) return true;
  const lower = code | 0x20;
  return hex && lower >= 97 && lower <= 102;
}

/** A numeric reference's character: U+FFFD for zero, surrogates and code points past Unicode, as HTML does. */
function codePointText(value: number): string {
  if (value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(value);
}

/** `text` with its character references decoded (numeric ones with or without the `;`, named ones with it). */
export function decodeEntities(text: string): string {
  let amp = text.indexOf("&");
  if (amp === -1) return text;
  let out = "";
  let copied = 0;
  while (amp !== -1) {
    let end = amp + 1;
    const limit = Math.min(text.length, amp + 1 + MAX_NAME);
    let replacement: string | undefined;
    if (text.charCodeAt(end) === 35 /* # */) {
      end++;
      const hex = (text.charCodeAt(end) | 0x20) === 120; /* x or X */
      if (hex) end++;
      const digitsStart = end;
      // Every digit read is consumed below, so reading them all keeps the scan linear.
      while (end < text.length && isDigit(text.charCodeAt(end), hex)) end++;
      if (end > digitsStart) {
        const digits = text.slice(digitsStart, end);
        replacement = codePointText(digits.length > 8 ? Infinity : parseInt(digits, hex ? 16 : 10));
        if (text.charCodeAt(end) === 59 /* ; */) end++;
      }
    } else {
      while (end < limit && isAlnum(text.charCodeAt(end))) end++;
      if (end > amp + 1 && text.charCodeAt(end) === 59) {
        replacement = NAMED[text.slice(amp + 1, end)];
        end++;
      }
    }
    if (replacement !== undefined) {
      out += text.slice(copied, amp) + replacement;
      copied = end;
      amp = text.indexOf("&", end);
    } else amp = text.indexOf("&", amp + 1);
  }
  return out + text.slice(copied);
}
