import { birthDateSpans } from "./birth-date-spans.js";
import { patternMatches } from "./custom-pattern.js";
import { emailSpans } from "./email-spans.js";
import type { Redaction, RedactionKind } from "./redaction-rules.js";
import { spokenDigitRuns, type DigitRun } from "./spoken-digit-runs.js";
import { tokenize, type TextToken } from "./text-tokens.js";

/**
 * What a caller said that must not be stored, found in what a speech recognizer or a chat
 * model wrote: lower-case words, digits said one by one ("four one five", "oh" for zero,
 * "double five"), in groups ("forty one eleven"), written ("4155 5555"), or a mix.
 *
 * Numbers are runs of digits (see spoken-digit-runs.ts); a run is given the longest kind
 * the rule set enables that its length fits:
 * - card_number: 13 to 19 digits. The Luhn check is not required: a recognizer that mishears
 *   one digit must not make the rest of the card number visible.
 * - phone_number: 10 to 15 digits (E.164), 7 digits (a local number), or 8 to 15 after
 *   "plus"/"+". A run after "plus" is a phone number even when its length fits a card.
 * - ssn: 9 digits, grouped 3-2-4 or not; 4 digits right after "social", "social security"
 *   or "ssn" (the last four of it).
 * A run that fits no enabled kind is left alone: a 16-digit run is not a phone number when
 * card_number is off, and a 6-digit order number is nothing. A run longer than 19 digits (a
 * card said with its expiry and code, two numbers said without a pause) fits nothing but is
 * hidden as the first enabled of card_number, phone_number, ssn rather than shown.
 *
 * Email addresses and dates of birth: see email-spans.ts and birth-date-spans.ts. Custom
 * rules: every match of the pattern, with the rule's name as kind (custom-pattern.ts).
 */
export interface RedactedSpan {
  kind: string;
  /** Character offsets in the text: `text.slice(start, end)` is what is hidden. */
  start: number;
  end: number;
}

/** The spans of `text` to hide, sorted and not overlapping (overlaps merged, the earlier one's kind kept). */
export function findSensitiveSpans(text: string, redaction: Redaction): RedactedSpan[] {
  const spans: RedactedSpan[] = [];
  const { kinds } = redaction;
  if (kinds.size > 0) {
    const tokens = tokenize(text);
    if (kinds.has("card_number") || kinds.has("phone_number") || kinds.has("ssn")) spans.push(...numberSpans(text, tokens, kinds));
    if (kinds.has("email")) spans.push(...emailSpans(text, tokens).map((s) => ({ kind: "email", ...s })));
    if (kinds.has("date_of_birth")) spans.push(...birthDateSpans(text, tokens, redaction.now()).map((s) => ({ kind: "date_of_birth", ...s })));
  }
  for (const rule of redaction.rules) spans.push(...patternMatches(rule.pattern, text).map((m) => ({ kind: rule.name, ...m })));
  return merge(spans);
}

const SSN_CUES = new Set(["social", "ssn"]);
/** How many words before a 4-digit run an SSN cue may be ("the last four of my social are ..."). */
const SSN_CUE_REACH = 8;

function numberSpans(text: string, tokens: readonly TextToken[], kinds: ReadonlySet<RedactionKind>): RedactedSpan[] {
  const spans: RedactedSpan[] = [];
  for (const run of spokenDigitRuns(text, tokens, 4)) {
    const kind = numberKind(run, kinds) ?? (run.digits.length === 4 && kinds.has("ssn") && afterSsnCue(tokens, run) ? "ssn" : null);
    if (kind !== null) spans.push({ kind, start: run.start, end: run.end });
  }
  return spans;
}

function numberKind(run: DigitRun, kinds: ReadonlySet<RedactionKind>): RedactionKind | null {
  const n = run.digits.length;
  if (run.plus && n >= 8 && n <= 15) return kinds.has("phone_number") ? "phone_number" : null;
  if (n >= 13 && n <= 19 && kinds.has("card_number")) return "card_number";
  if (((n >= 10 && n <= 15) || n === 7) && kinds.has("phone_number")) return "phone_number";
  if (n === 9 && kinds.has("ssn")) return "ssn";
  if (n > 19) return (["card_number", "phone_number", "ssn"] as const).find((kind) => kinds.has(kind)) ?? null;
  return null;
}

function afterSsnCue(tokens: readonly TextToken[], run: DigitRun): boolean {
  for (let i = Math.max(0, run.firstToken - SSN_CUE_REACH); i < run.firstToken; i++) {
    const word = tokens[i]!.word;
    if (SSN_CUES.has(word) || (word === "s" && tokens[i + 1]?.word === "s" && tokens[i + 2]?.word === "n")) return true;
  }
  return false;
}

function merge(spans: RedactedSpan[]): RedactedSpan[] {
  // Earlier first; at the same start the longer first, then in the order found.
  const sorted = spans.map((span, order) => ({ span, order })).sort((a, b) => a.span.start - b.span.start || b.span.end - a.span.end || a.order - b.order);
  const out: RedactedSpan[] = [];
  for (const { span } of sorted) {
    const last = out[out.length - 1];
    if (last && span.start < last.end) last.end = Math.max(last.end, span.end);
    else out.push({ ...span });
  }
  return out;
}
