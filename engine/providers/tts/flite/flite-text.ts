import { toSpeechText } from "../../../text/speech-text.js";

/** Typographic characters with the ASCII Flite understands (it skips non-ASCII bytes, losing the pause they carry). */
const ASCII_EQUIVALENTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/[‘’‚‛′]/g, "'"],
  [/[“”„‟″]/g, '"'],
  [/…/g, "..."],
  // A spaced dash is a pause; Flite reads it without one, but pauses at a comma.
  [/\s+[-–—]+\s+/g, ", "],
  [/[–—]/g, "-"],
];

/**
 * Text as Flite should get it: speech text (no markdown, no emoji) folded to printable ASCII,
 * diacritics dropped ("café" -> "cafe"), other characters removed. Empty when nothing speakable
 * is left (Flite would only render silence).
 */
export function toFliteText(text: string): string {
  let folded = toSpeechText(text);
  for (const [pattern, ascii] of ASCII_EQUIVALENTS) folded = folded.replace(pattern, ascii);
  folded = folded
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/[^\x20-\x7e]/g, "")
    .replace(/ {2,}/g, " ")
    .replace(/ ([,.!?;:])/g, "$1")
    .trim();
  return /[a-z0-9]/i.test(folded) ? folded : "";
}
