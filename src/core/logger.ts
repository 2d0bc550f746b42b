import { pino, type DestinationStream, type Logger } from "pino";
import { logLineScrubber, maskPhoneNumber } from "./log-scrub.js";

/** Pino's levels, and `silent`. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Fields that hold a phone number wherever a log call puts them: masked whatever their format. */
const PHONE_FIELDS: ReadonlySet<string> = new Set(["phone_number", "from_number", "to_number", "transfer_number", "caller_number"]);

/** Fields whose value never reaches a log line, at the top level or one object down (`req.headers.authorization` too). */
const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set(["authorization", "cookie", "key", "secret", "signing_secret", "media_token", "token", "password", "apiKey", "api_key"]);

const REDACTED = "[redacted]";

export interface LoggerOptions {
  /** Credentials of no recognisable shape (provider API keys, the SIP trunk password): removed from every line. */
  secrets?: readonly string[];
  /** Where lines go; stdout by default. */
  destination?: DestinationStream;
}

/**
 * JSON logs, one line per entry, on stdout. No credential or full phone number reaches them:
 * credential fields are replaced and phone fields masked in what log calls pass (see
 * `guardFields`), then the serialized line is scrubbed (see logLineScrubber) for what hides in
 * messages, errors and URLs. Both are a few hundred nanoseconds a line, cheaper than pino's
 * own wildcard `redact`, which this replaces.
 */
export function createLogger(level: LogLevel, options: LoggerOptions = {}): Logger {
  const settings = {
    level,
    base: { service: "parley" },
    formatters: { log: guardFields, bindings: guardFields },
    hooks: { streamWrite: logLineScrubber(options.secrets) },
  };
  // Written asynchronously: a line logged while the previous write is under way joins the next
  // write, so a busy service makes one write per batch of lines instead of one blocking write per
  // request (and a slow reader of stdout, such as a full pipe to journald, does not stall
  // requests). An idle service still writes each line at once; lines not yet written at exit
  // (process.exit included) are flushed on the way out; a SIGKILL can lose the last few.
  return pino(settings, options.destination ?? pino.destination({ dest: 1, sync: false }));
}

/**
 * `fields` with credential fields replaced and phone fields masked, at the top level and one
 * object down (`headers.authorization`, `call.phone_number`); the object itself is not
 * changed (a copy is made only when something must go).
 */
function guardFields(fields: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let out = fields;
  for (const key in fields) {
    const value = fields[key];
    let guarded = value;
    if (CREDENTIAL_FIELDS.has(key)) guarded = value === undefined || value === null ? value : REDACTED;
    else if (PHONE_FIELDS.has(key) && (typeof value === "string" || typeof value === "number") && /\d/.test(String(value))) guarded = maskPhoneNumber(String(value));
    else if (depth < 2 && value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Error)) guarded = guardFields(value as Record<string, unknown>, depth + 1);
    if (guarded !== value) {
      if (out === fields) out = { ...fields };
      out[key] = guarded;
    }
  }
  return out;
}
