import { createHash, createHmac, createPrivateKey, randomUUID, sign, timingSafeEqual, type KeyObject } from "node:crypto";

/** How long a Voice API token lives: 15 minutes, as @vonage/jwt's tokenGenerate makes them. */
export const VONAGE_TOKEN_TTL_SECONDS = 900;

const JWT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * A token for Vonage's Voice API (`Authorization: Bearer ...`): an RS256 JWT signed with the
 * application's private key, claims `application_id`, `iat`, `exp` (15 minutes on) and a
 * random `jti`, as Vonage's own library makes it. `now` is milliseconds since the epoch.
 * Throws when the key is not an RSA private key (a configuration error, found at start).
 */
export function vonageApiToken(options: { applicationId: string; privateKeyPem: string | Buffer | KeyObject; now: number }): string {
  const { applicationId, privateKeyPem, now } = options;
  if (!applicationId) throw new TypeError("a Vonage application id is required");
  const key = typeof privateKeyPem === "object" && !Buffer.isBuffer(privateKeyPem) ? privateKeyPem : createPrivateKey(privateKeyPem);
  if (key.type !== "private" || key.asymmetricKeyType !== "rsa") throw new TypeError("the Vonage private key must be an RSA private key");
  const iat = Math.floor(now / 1000);
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const claims = base64url(JSON.stringify({ application_id: applicationId, iat, exp: iat + VONAGE_TOKEN_TTL_SECONDS, jti: randomUUID() }));
  const signature = sign("sha256", Buffer.from(`${header}.${claims}`), key).toString("base64url");
  return `${header}.${claims}.${signature}`;
}

/** A Vonage webhook as received, and what to check it against. */
export interface VonageWebhookCheck {
  /** The request's `Authorization` header: `Bearer <jwt>`. */
  authorization: string | undefined | null;
  /** The account's signature secret (Vonage dashboard, API settings), the HS256 key. */
  signatureSecret: string;
  /** The request body exactly as received (bytes, or the same bytes as UTF-8 text); empty for a GET. */
  rawBody: string | Buffer;
  /** The time now, in milliseconds since the epoch. */
  now: number;
  /** How far `iat` may be from now, either way. */
  toleranceSeconds?: number;
  /** When given, the token's `application_id` must be this one (another application of the account signs with the same secret). */
  applicationId?: string;
}

/**
 * Whether a webhook was signed by Vonage: an HS256 JWT keyed with the signature secret (no
 * other algorithm is accepted, whatever the token's header says), issued (`iat`) within the
 * tolerance of now, not expired when it has an `exp`, and bound to the body: `payload_hash`,
 * the hex SHA-256 of the body, must match. A token without `payload_hash` is accepted only
 * with an empty body, so a token taken from a GET cannot carry a body of the taker's choosing.
 * False, never a throw, for anything missing or malformed.
 */
export function verifyVonageSignedWebhook(check: VonageWebhookCheck): boolean {
  const { authorization, signatureSecret, rawBody, now, toleranceSeconds = 300, applicationId } = check;
  if (typeof authorization !== "string" || !signatureSecret) return false;
  if (!Number.isFinite(now) || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) return false;
  const token = BEARER.exec(authorization.trim())?.[1];
  const parts = token === undefined ? null : JWT.exec(token);
  if (!parts) return false;
  const [, headerPart, claimsPart, signaturePart] = parts as unknown as [string, string, string, string];

  const expected = Buffer.from(createHmac("sha256", signatureSecret).update(`${headerPart}.${claimsPart}`).digest("base64url"), "utf8");
  const given = Buffer.from(signaturePart, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;

  const header = jsonObject(headerPart);
  const claims = jsonObject(claimsPart);
  if (header === null || claims === null || header.alg !== "HS256") return false;

  const seconds = now / 1000;
  const { iat, exp, payload_hash: payloadHash } = claims;
  if (typeof iat !== "number" || !Number.isFinite(iat) || Math.abs(seconds - iat) > toleranceSeconds) return false;
  if (exp !== undefined && (typeof exp !== "number" || !(seconds < exp))) return false;
  if (applicationId !== undefined && claims.application_id !== applicationId) return false;

  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody;
  if (payloadHash === undefined) return body.length === 0;
  return typeof payloadHash === "string" && payloadHash.toLowerCase() === createHash("sha256").update(body).digest("hex");
}

function base64url(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}

/** A JWT segment's JSON object, or null when it is not one. */
function jsonObject(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
