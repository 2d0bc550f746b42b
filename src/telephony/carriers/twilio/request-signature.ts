import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * A Twilio webhook's form parameters as the body parser gives them: a name sent more than
 * once carries its values as an array.
 */
export type TwilioParams = Readonly<Record<string, string | readonly string[]>>;

/**
 * The `X-Twilio-Signature` Twilio sends with a webhook: base64 HMAC-SHA1, keyed with the
 * account's auth token, of the full URL Twilio requested (scheme, host, path and query string,
 * exactly as configured at Twilio) followed by each form parameter's name and value with no
 * separator, names in case-sensitive order. A repeated name contributes its distinct values in
 * sorted order, as Twilio's own library (twilio-node's getExpectedTwilioSignature) computes it.
 * Throws a TypeError when a value is neither a string nor an array of strings.
 */
export function twilioSignature(authToken: string, url: string, params: TwilioParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    for (const value of valuesOf(name, params[name])) data += name + value;
  }
  return createHmac("sha1", authToken).update(data, "utf8").digest("base64");
}

/**
 * Whether `header` (the request's `X-Twilio-Signature`) is Twilio's signature of this request,
 * compared in constant time. False, never a throw, for a missing or empty header, an empty auth
 * token (anyone could sign with an empty key) or parameters of another shape than a form's.
 */
export function isTwilioSignatureValid(authToken: string, url: string, params: TwilioParams, header: string | undefined | null): boolean {
  if (!header || !authToken) return false;
  let expected: Buffer;
  try {
    expected = Buffer.from(twilioSignature(authToken, url, params), "utf8");
  } catch {
    return false;
  }
  const given = Buffer.from(header, "utf8");
  // The expected length is fixed by SHA-1 (28 base64 characters) and not secret.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function valuesOf(name: string, value: unknown): readonly string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return [...new Set<string>(value)].sort();
  throw new TypeError(`form parameter ${name.slice(0, 40)} is neither a string nor a list of strings`);
}
