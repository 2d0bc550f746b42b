/**
 * What keeps secrets and phone numbers out of log lines, applied to every serialized line
 * (see createLogger), so a careless log call (an error message quoting a number, a URL with
 * its signature) is still safe:
 * - credentials of a known shape lose everything after their prefix: API keys
 *   (`sk_parley_...`), web call tokens (`wct_...`), media tokens (`mt_...`), webhook signing
 *   secrets (`whsec_...`), `Bearer`/`Basic` credentials, and the `signature` of a URL;
 * - credentials of no known shape (provider API keys, the SIP trunk password) are given to
 *   the scrubber by value and replaced wherever they appear;
 * - phone numbers are masked (see maskPhoneNumber): `+` followed by 7 to 15 digits (E.164,
 *   also with spaces, dots, dashes or brackets between digit groups), SIP and tel URIs'
 *   digits, and runs of 10 to 15 digits standing alone in text. Identifiers (`call_3x9...`),
 *   ISO times and JSON numbers (the `time` field, durations) are left alone.
 */

/** Digits kept at the end of a masked number. */
const TAIL_DIGITS = 3;
/** At least this many digits of a number are hidden. */
const MIN_HIDDEN_DIGITS = 4;
/** At most this many digits are kept at the start (country and area code). */
const MAX_LEAD_DIGITS = 4;

/**
 * A phone number with its middle digits starred, keeping a leading `+`, up to the first 4
 * digits (country and area code) and the last 3, at least 4 digits always hidden:
 * `+14155550123` -> `+1415****123`, `4155550123` -> `415****123`. Formatting between digits
 * is dropped. A value with fewer than 7 digits (a short code, an extension) is starred whole.
 */
export function maskPhoneNumber(value: string): string {
  const digits = value.replace(/\D/g, "");
  const plus = value.trimStart().startsWith("+") ? "+" : "";
  if (digits.length < 7) return plus + "*".repeat(digits.length);
  const lead = Math.min(MAX_LEAD_DIGITS, digits.length - TAIL_DIGITS - MIN_HIDDEN_DIGITS);
  return plus + digits.slice(0, lead) + "*".repeat(digits.length - lead - TAIL_DIGITS) + digits.slice(-TAIL_DIGITS);
}

const REDACTED = "[redacted]";

/** Credentials recognised by their shape: the prefix stays (it says what was there), the rest goes. */
const TOKEN_PATTERNS = [
  /sk_parley_[A-Za-z0-9]+/, // API keys (ApiKeysService)
  /wct_[A-Za-z0-9]+/, // web call tokens (WebCallTokens)
  /(?<![A-Za-z0-9_])mt_[A-Za-z0-9]{8,}/, // media tokens (AccountsService)
  /whsec_[A-Za-z0-9_-]+/, // webhook signing secrets
  /(?<=\b(?:Bearer|Basic) +)[A-Za-z0-9._~+/=-]+/, // Authorization header values
  /(?<=[?&;]signature=)[^&"\s\\]+/, // signed links (RecordingLinks)
];
/** Substrings one of which is in every line TOKEN_PATTERNS can match: most lines skip that regex. */
const TOKEN_HINTS = ["sk_parley_", "wct_", "mt_", "whsec_", "Bearer", "Basic", "signature="];
const TOKENS = new RegExp(TOKEN_PATTERNS.map((p) => p.source).join("|"), "g");

/** `+` and 7 to 15 digits (maybe grouped), or a SIP/tel URI's digits. */
const PLUS_OR_URI_NUMBER = /\+\d(?:[ .()-]{0,2}\d){6,14}(?!\d)|(?<=\b(?:sips?|tel):)\d{6,15}(?!\d)/g;
/** Runs of digits; those of 10 to 15 standing alone in text are numbers (see maskStandingAlone). */
const DIGIT_RUN = /\d{10,}/g;
/** Cheap test for a run of 10 digits that may stand alone (the `time` field's follows `:`). */
const DIGIT_RUN_HINT = /[^\w.:+-]\d{10}|\\[nrt]\d{10}/;

/**
 * A scrubber for serialized log lines: `secrets` are exact values replaced wherever they
 * appear (values shorter than 4 characters are ignored: replacing them would garble lines).
 * Each check first looks for a cheap hint, so a line with nothing to hide costs a few scans.
 */
export function logLineScrubber(secrets: readonly string[] = []): (line: string) => string {
  // Each value as written and as it reads inside a JSON string (quotes and backslashes escaped).
  const values = [...new Set(secrets.filter((s) => s.length >= 4).flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))].sort((a, b) => b.length - a.length);
  const exact = values.length > 0 ? new RegExp(values.map(escapeRegExp).join("|"), "g") : null;
  return (line) => {
    let out = line;
    if (exact && values.some((v) => out.includes(v))) out = out.replace(exact, REDACTED);
    if (TOKEN_HINTS.some((hint) => out.includes(hint))) out = out.replace(TOKENS, tokenRedacted);
    if (out.includes("+") || out.includes("sip:") || out.includes("sips:") || out.includes("tel:")) out = out.replace(PLUS_OR_URI_NUMBER, maskPhoneNumber);
    return DIGIT_RUN_HINT.test(out) ? out.replace(DIGIT_RUN, maskStandingAlone) : out;
  };
}

/**
 * A run of digits is a phone number when it has 10 to 15 digits and stands alone in text: not
 * after a letter, digit, `_`, `.`, `:` (a JSON number follows `":`), `+` or `-` (a JSON escape
 * such as `\n` before it still counts as a start), nor before a letter, `_` or `.`.
 */
function maskStandingAlone(run: string, offset: number, line: string): string {
  if (run.length > 15) return run;
  const before = line[offset - 1] ?? " ";
  const after = line[offset + run.length] ?? " ";
  const escaped = /[nrt]/.test(before) && line[offset - 2] === "\\";
  if (!escaped && /[\w.:+-]/.test(before)) return run;
  if (/[\w.]/.test(after)) return run;
  return maskPhoneNumber(run);
}

function tokenRedacted(match: string): string {
  const prefix = /^(?:sk_parley_|wct_|mt_|whsec_)/.exec(match)?.[0] ?? "";
  return prefix + REDACTED;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
