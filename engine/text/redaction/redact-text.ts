import type { Redaction } from "./redaction-rules.js";
import { findSensitiveSpans, type RedactedSpan } from "./sensitive-spans.js";

/**
 * Call text with what must not be stored replaced by its kind in brackets:
 * "my card is four one one one ... one" -> "my card is [card_number]". The spans are offsets
 * in the text given (for lining up with word timings, to silence the recording).
 */
export function redactText(text: string, redaction: Redaction): { text: string; spans: RedactedSpan[] } {
  const spans = findSensitiveSpans(text, redaction);
  if (spans.length === 0) return { text, spans };
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += `${text.slice(at, span.start)}[${span.kind}]`;
    at = span.end;
  }
  return { text: out + text.slice(at), spans };
}

/**
 * A copy of a JSON-like value (analysis data, event payloads) with every string redacted; keys
 * are kept. A number that reads as a sensitive number (a phone number extracted as 4155550199)
 * becomes the placeholder string: its type changes rather than the number being kept.
 */
export function redactJson<T>(value: T, redaction: Redaction): T {
  return redactValue(value, redaction) as T;
}

function redactValue(value: unknown, redaction: Redaction): unknown {
  if (typeof value === "string") return redactText(value, redaction).text;
  if (typeof value === "number" && Number.isFinite(value)) {
    const redacted = redactText(String(value), redaction);
    return redacted.spans.length > 0 ? redacted.text : value;
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redaction));
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    // defineProperty: a "__proto__" key from JSON.parse stays a key instead of setting the prototype.
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: redactValue(item, redaction), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
