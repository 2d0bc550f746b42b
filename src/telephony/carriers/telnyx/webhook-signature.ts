import { createPublicKey, verify, type KeyObject } from "node:crypto";

/** DER of an ed25519 SubjectPublicKeyInfo up to the key itself (RFC 8410): prefix + 32 raw bytes. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Unix seconds: digits only, short enough to stay an exact number. */
const UNIX_SECONDS = /^\d{1,12}$/;

/** A Telnyx webhook as received, and what to check it against. */
export interface TelnyxSignatureCheck {
  /** The account's public key from Telnyx's portal: base64 of the raw 32 bytes, or a key made by telnyxPublicKey. */
  publicKey: string | KeyObject;
  /** The `telnyx-signature-ed25519` header: base64 of the 64-byte signature. */
  signature: string | undefined | null;
  /** The `telnyx-timestamp` header: unix seconds. */
  timestamp: string | undefined | null;
  /** The request body exactly as received (bytes, or the same bytes as UTF-8 text). */
  rawBody: string | Buffer;
  /** The time now, in milliseconds since the epoch. */
  now: number;
  /** How far the timestamp may be from now, either way; 300 s as Telnyx's own library allows. */
  toleranceSeconds?: number;
}

/**
 * The KeyObject of a public key as Telnyx's portal shows it (base64 of its raw 32 bytes), or
 * null when the text is not exactly that.
 */
export function telnyxPublicKey(base64: string): KeyObject | null {
  const raw = strictBase64(base64.trim(), 32);
  if (raw === null) return null;
  try {
    return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" });
  } catch {
    return null;
  }
}

/**
 * Whether a webhook was signed by Telnyx: an ed25519 signature, with the account's key, of
 * `${timestamp}|${rawBody}`, and a timestamp within the tolerance of now (older is a replay,
 * newer cannot be genuine). False, never a throw, for a missing or malformed header or key.
 */
export function isTelnyxSignatureValid(check: TelnyxSignatureCheck): boolean {
  const { signature, timestamp, rawBody, now, toleranceSeconds = 300 } = check;
  if (typeof signature !== "string" || typeof timestamp !== "string") return false;
  // A NaN tolerance or clock would make every timestamp pass the comparison below.
  if (!UNIX_SECONDS.test(timestamp) || !Number.isFinite(now) || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) return false;
  if (Math.abs(now - Number(timestamp) * 1000) > toleranceSeconds * 1000) return false;
  const signatureBytes = strictBase64(signature.trim(), 64);
  if (signatureBytes === null) return false;
  const key = typeof check.publicKey === "string" ? telnyxPublicKey(check.publicKey) : check.publicKey;
  if (key === null || key.type !== "public" || key.asymmetricKeyType !== "ed25519") return false;
  const signed = Buffer.concat([Buffer.from(`${timestamp}|`, "utf8"), typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody]);
  try {
    return verify(null, signed, key, signatureBytes);
  } catch {
    return false;
  }
}

/** Canonical base64 of exactly `length` bytes, or null (Buffer.from alone skips stray characters). */
function strictBase64(text: string, length: number): Buffer | null {
  if (!STRICT_BASE64.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  return bytes.length === length && bytes.toString("base64") === text ? bytes : null;
}
