import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** A response as the Idempotency-Key store keeps it: its JSON with the secret fields null, and those fields sealed. */
export interface StoredResponse {
  body: string;
  /** The secret fields' values, encrypted; null when the response had none. */
  sealed: string | null;
}

const FORMAT = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The key one stored response's secrets are sealed under: HKDF-SHA256 of the caller's API key
 * (the service keeps only its SHA-256, so the database alone cannot give it back) and the
 * row's scope (account, method, path, Idempotency-Key), so no two rows share a key.
 */
function keyOf(apiKey: string, scope: readonly string[]): Buffer {
  return Buffer.from(hkdfSync("sha256", apiKey, Buffer.alloc(0), `parley idempotency secrets ${FORMAT}\n${JSON.stringify(scope)}`, 32));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Cuts `fields` (top-level) out of a response before it is stored: they become null in the
 * stored JSON (keeping their place, so the body is restored byte for byte) and their values
 * are sealed with AES-256-GCM under the caller's key, the stored JSON as associated data.
 */
export function sealSecretFields(body: unknown, fields: readonly string[], apiKey: string, scope: readonly string[]): StoredResponse {
  const present = isObject(body) ? fields.filter((f) => Object.hasOwn(body, f) && body[f] !== undefined) : [];
  if (!isObject(body) || present.length === 0) return { body: JSON.stringify(body), sealed: null };
  const secrets: Record<string, unknown> = {};
  const redacted: Record<string, unknown> = { ...body };
  for (const field of present) {
    secrets[field] = body[field];
    redacted[field] = null;
  }
  const stored = JSON.stringify(redacted);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyOf(apiKey, scope), iv);
  cipher.setAAD(Buffer.from(stored));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), "utf8"), cipher.final()]);
  return { body: stored, sealed: `${FORMAT}.${Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString("base64url")}` };
}

/**
 * The response as it was first sent, its secret fields opened with the caller's key; undefined
 * when this key cannot open them (another API key of the account stored the response).
 */
export function openSecretFields(stored: StoredResponse, apiKey: string, scope: readonly string[]): string | undefined {
  if (stored.sealed === null) return stored.body;
  const [format, packed] = stored.sealed.split(".", 2);
  if (format !== FORMAT || packed === undefined) return undefined;
  const bytes = Buffer.from(packed, "base64url");
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  let secrets: Record<string, unknown>;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(apiKey, scope), bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(stored.body));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    secrets = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString("utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const body = JSON.parse(stored.body) as Record<string, unknown>;
  // Assigning a key the parsed object has keeps its place: the text is the one first sent.
  for (const [field, value] of Object.entries(secrets)) body[field] = value;
  return JSON.stringify(body);
}
