import { toFliteText } from "../flite/flite-text.js";

/**
 * A sentence as a Scheme string literal for Festival, or undefined when nothing speakable is
 * left. The text is folded to printable ASCII as Flite's is (Festival reads bytes as Latin-1),
 * then every backslash and double quote is escaped, so the literal ends only at its own closing
 * quote: quotes or parentheses in the text are spoken, never read as Scheme. The request passes
 * the literal to `Utterance` through `eval` of a list, so it is a string value, not code.
 */
export function toFestivalString(text: string): string | undefined {
  const ascii = toFliteText(text);
  if (!ascii) return undefined;
  // toFliteText leaves only 0x20-0x7e: no newline can end the request line early.
  return `"${ascii.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
