/**
 * ITU-T E.164 country calling codes of one or two digits; every other assigned code has three.
 * Codes are prefix-free, so this set is all it takes to split a number's code from the rest.
 */
const SHORT_CODES = new Set([
  "1", "7", "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46", "47", "48", "49",
  "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65", "66", "81", "82", "84", "86",
  "90", "91", "92", "93", "94", "95", "98",
]);

/** The country calling code of an E.164 number, with its plus: `+14155550100` -> `+1`, `+971...` -> `+971`. */
export function callingCode(e164: string): string {
  const digits = e164.replace(/^\+/, "");
  if (SHORT_CODES.has(digits.slice(0, 1))) return `+${digits.slice(0, 1)}`;
  if (SHORT_CODES.has(digits.slice(0, 2))) return `+${digits.slice(0, 2)}`;
  return `+${digits.slice(0, 3)}`;
}
