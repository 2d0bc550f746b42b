import { createHash, randomBytes } from "node:crypto";
import type { SipResponse } from "./sip-message.js";

/**
 * HTTP Digest authentication of SIP requests, client side (RFC 3261 22, RFC 2617, RFC 8760):
 * read the challenge of a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate) and compute the
 * Authorization or Proxy-Authorization that answers it. qop `auth` or none; a challenge
 * offering only `auth-int` (a hash of the body too) is not answered: trunks offer `auth`.
 */

/** Algorithms we answer (each also as `-sess`, which hashes nonce and cnonce into HA1), lower-cased, with their node:crypto hash. */
const HASHES: ReadonlyMap<string, string> = new Map([
  ["md5", "md5"],
  ["sha-256", "sha256"],
  ["sha-512-256", "sha512-256"],
]);

export interface DigestCredentials {
  username: string;
  password: string;
  /** Answer only challenges naming this realm (the trunk's); any realm when unset. */
  realm?: string;
}

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  /** As the challenge names it (default MD5). */
  algorithm: string;
  /** The qop options offered, lower-cased; empty for an RFC 2069 challenge without qop. */
  qop: readonly string[];
}

/** Where a 401 or 407 carries its challenges and the header that answers them (RFC 3261 22.2, 22.3). */
const CHALLENGE_HEADERS: Readonly<Record<number, readonly [challenge: string, answer: string]>> = {
  401: ["WWW-Authenticate", "Authorization"],
  407: ["Proxy-Authenticate", "Proxy-Authorization"],
};

/**
 * The header answering a 401/407 for a request with `method` and Request-URI `uri`: its name
 * and value, from the first challenge we can answer (RFC 8760 2.4: the server lists its
 * preferred one first). Undefined for another status or when no challenge is answerable (or,
 * with `credentials.realm`, none names that realm).
 */
export function answerChallenge(response: SipResponse, request: { method: string; uri: string }, credentials: DigestCredentials): [string, string] | undefined {
  const names = CHALLENGE_HEADERS[response.status];
  if (!names) return undefined;
  for (const value of response.headers.getAll(names[0])) {
    const challenge = parseDigestChallenge(value);
    const ours = credentials.realm === undefined || challenge?.realm === credentials.realm;
    if (challenge && ours && answerable(challenge)) return [names[1], digestAuthorization(challenge, credentials, request)];
  }
  return undefined;
}

/** A WWW-Authenticate or Proxy-Authenticate value, if it is a Digest challenge with a realm and nonce. */
export function parseDigestChallenge(value: string): DigestChallenge | undefined {
  const scheme = /^\s*Digest\s+/i.exec(value);
  if (!scheme) return undefined;
  const params = parseAuthParams(value.slice(scheme[0].length));
  const [realm, nonce, opaque] = [params.get("realm"), params.get("nonce"), params.get("opaque")];
  if (realm === undefined || nonce === undefined) return undefined;
  const qop = (params.get("qop") ?? "").split(",").map((option) => option.trim().toLowerCase()).filter((option) => option !== "");
  return { realm, nonce, ...(opaque !== undefined ? { opaque } : {}), algorithm: params.get("algorithm") ?? "MD5", qop };
}

/**
 * The Authorization (or Proxy-Authorization) value answering `challenge` (RFC 2617 3.2.2):
 * `uri` is the Request-URI. With qop=auth offered it is used, with nc 00000001 (each nonce
 * answers one request here) and `cnonce` (random unless given, for tests).
 */
export function digestAuthorization(
  challenge: DigestChallenge,
  credentials: DigestCredentials,
  request: { method: string; uri: string },
  cnonce = randomBytes(8).toString("hex"),
): string {
  if (!answerable(challenge)) throw new Error(`cannot answer a Digest challenge with algorithm ${challenge.algorithm} and qop "${challenge.qop.join(",")}"`);
  const algorithm = challenge.algorithm.toLowerCase();
  const hash = (text: string) => createHash(HASHES.get(algorithm.replace(/-sess$/, ""))!).update(text, "utf8").digest("hex");
  const qop = challenge.qop.includes("auth");
  const nc = "00000001";
  let ha1 = hash(`${credentials.username}:${challenge.realm}:${credentials.password}`);
  if (algorithm.endsWith("-sess")) ha1 = hash(`${ha1}:${challenge.nonce}:${cnonce}`);
  const ha2 = hash(`${request.method}:${request.uri}`);
  const response = hash(qop ? `${ha1}:${challenge.nonce}:${nc}:${cnonce}:auth:${ha2}` : `${ha1}:${challenge.nonce}:${ha2}`);
  // nonce before cnonce: some parsers (sipp's) find `nonce=` as a substring.
  const fields = [
    `username=${quote(credentials.username)}`,
    `realm=${quote(challenge.realm)}`,
    `nonce=${quote(challenge.nonce)}`,
    `uri=${quote(request.uri)}`,
    `response="${response}"`,
    `algorithm=${challenge.algorithm}`,
  ];
  if (qop) fields.push(`cnonce=${quote(cnonce)}`, "qop=auth", `nc=${nc}`);
  if (challenge.opaque !== undefined) fields.push(`opaque=${quote(challenge.opaque)}`);
  return `Digest ${fields.join(", ")}`;
}

/** A known algorithm, and qop `auth` when any qop is offered; `-sess` needs a cnonce, so qop too. */
function answerable(challenge: DigestChallenge): boolean {
  const algorithm = challenge.algorithm.toLowerCase();
  if (!HASHES.has(algorithm.replace(/-sess$/, ""))) return false;
  return challenge.qop.length === 0 ? !algorithm.endsWith("-sess") : challenge.qop.includes("auth");
}

/** `name=value` pairs separated by commas, values tokens or quoted strings (RFC 2617 1.2); names lower-cased. */
function parseAuthParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  const pattern = /\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*(?:,|$)/y;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    params.set(match[1]!.toLowerCase(), match[2] !== undefined ? match[2].replace(/\\(.)/g, "$1") : match[3]!);
  }
  return params;
}

function quote(text: string): string {
  return `"${text.replace(/(["\\])/g, "\\$1")}"`;
}
