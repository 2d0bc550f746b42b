import { Metadata, parsePhoneNumberFromString, validatePhoneNumberLength } from "libphonenumber-js/min";
import { callingCode } from "./calling-code.js";
import { isE164 } from "./e164.js";

/**
 * Phone numbers in one canonical form, so that two ways of writing a number compare equal:
 * `+4407700900123` (a UK mobile written with its national trunk 0 after the country code) is
 * `+447700900123`, the form the do-not-call list, the destination guard, inbound routing and
 * every stored number use.
 *
 * Accepted: E.164 text (a plus and 7 to 15 digits, nothing else) that libphonenumber-js reads
 * as a POSSIBLE number of its country (its length fits the country's plan), not necessarily
 * a valid one (assigned to a range): the fictional 555-01XX numbers (+15555550123) and the
 * simulator's +1500555 numbers stay accepted. The `min` metadata is enough for that: over
 * 756,000 random numbers of every calling code it gave the same form and the same verdict as
 * `max`, for 83 KB of metadata (`max`: 157 KB); loading it takes about 60-80 ms and 2 MB of
 * heap once. Reading a number took 7-20 us (German, French, US numbers, UK mobiles) and about
 * 35 us for one no country's ranges hold (+1555..., the UK's 07700 900 drama range: the library
 * tries every country of the code), on a busy 2-core machine; a 10,000-contact campaign took
 * 0.3-0.7 s longer to create.
 */

export type PhoneNumberReading = { number: string; problem?: undefined } | { number?: undefined; problem: string };

const SHAPE_PROBLEM = "must be an E.164 phone number like +14155550123";

/** `text` in canonical E.164, or why it is not a phone number Parley accepts (a sentence naming the number). */
export function readPhoneNumber(text: string): PhoneNumberReading {
  if (!isE164(text)) return { problem: SHAPE_PROBLEM };
  const parsed = parsePhoneNumberFromString(text);
  // A number read as itself is canonical already (the common case: one reading).
  if (parsed?.isPossible()) return { number: parsed.number === text ? text : fixedPoint(parsed.number) };
  const length = validatePhoneNumberLength(text);
  if (length === "INVALID_COUNTRY") return { problem: `${text} is not a possible number: no country has its calling code` };
  // The library gives no number back for some too-short ones (+1234567): their code is read here.
  const code = parsed?.countryCallingCode ?? callingCode(text).slice(1);
  const why = length === "TOO_SHORT" ? "too short" : length === "TOO_LONG" ? "too long" : "a length no number there has";
  return { problem: `${text} is not a possible number for ${parsed?.country ?? mainCountryOf(code) ?? `+${code}`} (${why})` };
}

/**
 * Reads the library's form again until it stays the same. One reading strips one trunk prefix,
 * so `+353005299750` gives `+35305299750`, which gives `+3535299750`: without this, writing a
 * stored number again could change it (in 4,587 of 176,299 random possible numbers, all
 * calling codes, most with a doubled 0), and two spellings of one number would not compare
 * equal. Each change shortens the number, so this ends; 2 extra readings were the most seen.
 */
function fixedPoint(number: string): string {
  for (;;) {
    const again = parsePhoneNumberFromString(number);
    if (!again?.isPossible() || again.number === number) return number;
    number = again.number;
  }
}

/** `text` in canonical E.164 when it is a possible phone number (see readPhoneNumber); undefined otherwise. */
export function normalizePhoneNumber(text: string): string | undefined {
  return readPhoneNumber(text).number;
}

/**
 * A number as stored and compared: canonical when it is a possible number, as given otherwise
 * (a number stored before numbers were checked, which the API no longer takes).
 */
export function canonicalPhoneNumber(text: string): string {
  return normalizePhoneNumber(text) ?? text;
}

/**
 * A caller ID from a SIP user part or a Twilio `From`: `+14155550100` or `14155550100` (the plus
 * implied). Null when it is not a possible number (a name, `anonymous`, garbage): such a caller
 * has no number, the call goes on.
 */
export function callerNumber(text: string): string | null {
  return normalizePhoneNumber(text.startsWith("+") ? text : `+${text}`) ?? null;
}

/**
 * The number a SIP INVITE dialled (its Request-URI user part, `+14155550100` or `14155550100`)
 * in canonical form, so `+4402079460000` reaches the number registered as `+442079460000`. An
 * E.164 user part that is no possible number stays as it is (a number stored before numbers
 * were checked may still be routed to); null when it is not E.164 at all.
 */
export function dialledNumber(user: string): string | null {
  const e164 = user.startsWith("+") ? user : `+${user}`;
  return normalizePhoneNumber(e164) ?? (isE164(e164) ? e164 : null);
}

/**
 * The main country of a calling code (`44` -> GB, `1` -> US), for messages. Not in the
 * library's typings; absent (undefined) for non-geographic codes such as +800.
 */
function mainCountryOf(callingCode: string): string | undefined {
  const metadata = new Metadata() as unknown as { getCountryCodeForCallingCode?: (code: string) => string | undefined };
  return metadata.getCountryCodeForCallingCode?.(callingCode);
}
