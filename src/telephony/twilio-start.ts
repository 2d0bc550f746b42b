import { ApiError } from "../core/api-error.js";
import { isE164 } from "../core/e164.js";
import { callerNumber, canonicalPhoneNumber } from "../core/phone-number.js";

/**
 * Bounds on a Twilio stream's custom parameters (its `<Parameter>` elements). The `start`
 * message as a whole is bounded by the endpoint's frame limit as well.
 */
export const MAX_CUSTOM_PARAMETERS = 32;
export const MAX_PARAMETER_NAME_LENGTH = 64;
/** As long as the longest value Parley reads (`context`, a JSON object of at most 4,096 characters). */
export const MAX_PARAMETER_VALUE_LENGTH = 4096;

/** Twilio's call and stream ids: a two-letter prefix and 32 hex digits. */
const CALL_SID = /^CA[0-9a-fA-F]{32}$/;
const STREAM_SID = /^MZ[0-9a-fA-F]{32}$/;

/** What Parley takes from a stream's `start` message, checked. */
export interface TwilioStreamStart {
  callSid: string;
  streamSid: string;
  /** The custom parameters, every value a string. */
  parameters: Record<string, string>;
  /** The dialled number (`To`), E.164 in canonical form (core/phone-number.ts); null when the stream names none. */
  to: string | null;
  /** The caller (`From`) in canonical form when it is a possible number; null otherwise (absent, `client:alice`, `anonymous`, a SIP URI). */
  from: string | null;
}

/**
 * Checks a `start` message's fields before anything of it is used or stored: ids in Twilio's
 * shape, custom parameters bounded, `To` an E.164 number (a stream to anything else cannot be
 * routed). A `From` that is not E.164 is a caller without a phone number (a Twilio Client
 * user): the call goes on with no `from_number`. Throws a 400 ApiError naming the field.
 */
export function checkTwilioStart(start: { callSid?: unknown; streamSid?: unknown; customParameters?: unknown }): TwilioStreamStart {
  if (typeof start.callSid !== "string" || !CALL_SID.test(start.callSid)) throw ApiError.field("invalid_request", "callSid", "must be CA followed by 32 hex digits");
  if (typeof start.streamSid !== "string" || !STREAM_SID.test(start.streamSid)) throw ApiError.field("invalid_request", "streamSid", "must be MZ followed by 32 hex digits");
  const parameters = checkParameters(start.customParameters ?? {});
  const to = parameters.To ?? parameters.to ?? null;
  if (to !== null && !isE164(to)) throw ApiError.field("invalid_phone_number", "To", "must be an E.164 number");
  const from = parameters.From ?? parameters.from ?? null;
  // From: Twilio sends E.164 with its plus; `client:alice` must not become +... by an implied plus.
  const caller = from !== null && isE164(from) ? callerNumber(from) : null;
  return { callSid: start.callSid, streamSid: start.streamSid, parameters, to: to === null ? null : canonicalPhoneNumber(to), from: caller };
}

function checkParameters(value: unknown): Record<string, string> {
  const invalid = (message: string) => ApiError.field("invalid_request", "customParameters", message);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw invalid("must be an object");
  const entries = Object.entries(value);
  if (entries.length > MAX_CUSTOM_PARAMETERS) throw invalid(`at most ${MAX_CUSTOM_PARAMETERS} parameters`);
  for (const [name, v] of entries) {
    if (name.length > MAX_PARAMETER_NAME_LENGTH) throw invalid(`names of at most ${MAX_PARAMETER_NAME_LENGTH} characters`);
    if (typeof v !== "string" || v.length > MAX_PARAMETER_VALUE_LENGTH) throw invalid(`${name.slice(0, 20)} must be a string of at most ${MAX_PARAMETER_VALUE_LENGTH} characters`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
