import { MAX_PATTERN_LENGTH, patternError } from "./custom-pattern.js";

/**
 * What an agent's `redact` setting asks to hide from stored call text: built-in kinds and the
 * account's own patterns. The setting is checked when it is saved (`checkRedactSetting`) and
 * compiled when it is used (`compileRedaction`).
 */
export const REDACTION_KINDS = ["card_number", "ssn", "email", "phone_number", "date_of_birth"] as const;
export type RedactionKind = (typeof REDACTION_KINDS)[number];

/** An account's own rule: every match of `pattern` (case-insensitive, RE2 syntax) is hidden as `[name]`. */
export interface CustomRedactionRule {
  name: string;
  pattern: string;
}

export type RedactSetting = Array<RedactionKind | CustomRedactionRule>;

export const MAX_REDACT_ITEMS = 20;
const RULE_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** A checked setting, ready for `findSensitiveSpans`. */
export interface Redaction {
  readonly kinds: ReadonlySet<RedactionKind>;
  readonly rules: readonly CustomRedactionRule[];
  /** Milliseconds since the epoch: a date after today is not a date of birth. */
  readonly now: () => number;
}

export interface CompileRedactionOptions {
  now?: () => number;
}

/** The setting as a `Redaction`; throws with `checkRedactSetting`'s message when it is not valid. */
export function compileRedaction(setting: unknown, options: CompileRedactionOptions = {}): Redaction {
  const error = checkRedactSetting(setting);
  if (error !== null) throw new Error(error);
  const items = setting as RedactSetting;
  return Object.freeze({
    kinds: new Set(items.filter((item): item is RedactionKind => typeof item === "string")),
    rules: Object.freeze(items.filter((item): item is CustomRedactionRule => typeof item !== "string").map((r) => Object.freeze({ name: r.name, pattern: r.pattern }))),
    now: options.now ?? Date.now,
  });
}

/** Null when `setting` is valid, else a message naming the first bad item ("redact[2].pattern: ..."). */
export function checkRedactSetting(setting: unknown): string | null {
  if (!Array.isArray(setting)) return "redact: must be an array of kinds and {name, pattern} rules";
  if (setting.length > MAX_REDACT_ITEMS) return `redact: at most ${MAX_REDACT_ITEMS} items (got ${setting.length})`;
  const seen = new Set<string>();
  for (const [index, item] of setting.entries()) {
    const at = `redact[${index}]`;
    if (typeof item === "string") {
      if (!(REDACTION_KINDS as readonly string[]).includes(item)) return `${at}: unknown kind ${JSON.stringify(item)} (one of ${REDACTION_KINDS.join(", ")}, or a {name, pattern} rule)`;
      if (seen.has(item)) return `${at}: ${JSON.stringify(item)} is listed twice`;
      seen.add(item);
      continue;
    }
    if (typeof item !== "object" || item === null || Array.isArray(item)) return `${at}: must be a kind or a {name, pattern} rule`;
    const extra = Object.keys(item).filter((key) => key !== "name" && key !== "pattern");
    if (extra.length > 0) return `${at}: unknown field ${JSON.stringify(extra[0])}`;
    const { name, pattern } = item as Record<string, unknown>;
    if (typeof name !== "string" || !RULE_NAME.test(name)) return `${at}.name: must match ${RULE_NAME.source}`;
    if ((REDACTION_KINDS as readonly string[]).includes(name)) return `${at}.name: ${JSON.stringify(name)} is a built-in kind; list it as a string`;
    if (seen.has(name)) return `${at}.name: ${JSON.stringify(name)} is used twice`;
    seen.add(name);
    if (typeof pattern !== "string") return `${at}.pattern: must be a string (at most ${MAX_PATTERN_LENGTH} characters)`;
    const error = patternError(pattern);
    if (error !== null) return `${at}.pattern: ${error}`;
  }
  return null;
}
