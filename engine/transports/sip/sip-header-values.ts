import { clip, SipParseError } from "./sip-parse-error.js";
import { formatHostPort, formatParams, formatSipUri, parseHostPort, parseParams, parseSipUri, type SipUri } from "./sip-uri.js";

/** The structured header values the stack reads: Via, From/To/Contact, CSeq, Max-Forwards. */

/** RFC 3261 8.1.1.7: a branch starting with this was made by an RFC 3261 client, unique per transaction. */
export const BRANCH_MAGIC_COOKIE = "z9hG4bK";
export const DEFAULT_SIP_PORT = 5060;

/**
 * One Via value. `params` holds `branch`, `received`, `rport` (null when asked for without a
 * value, RFC 3581), `maddr`, ... in order.
 */
export interface Via {
  /** "SIP/2.0". */
  protocol: string;
  /** "UDP", "TCP", ... upper-cased. */
  transport: string;
  host: string;
  port?: number;
  params: Record<string, string | null>;
}

/** A name-addr or addr-spec value: From, To, Contact, Route, Refer-To. */
export interface NameAddress {
  displayName?: string;
  uri: SipUri;
  /** Header parameters (after the URI): `tag`, `expires`, ... */
  params: Record<string, string | null>;
}

export interface CSeq {
  seq: number;
  method: string;
}

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

export function parseVia(value: string): Via {
  const [sentProtocol = "", ...params] = splitOutsideQuotes(value.trim(), ";");
  const match = /^([^\s/]+)\s*\/\s*([^\s/]+)\s*\/\s*([^\s/]+)\s+(\S+)$/.exec(sentProtocol.trim());
  if (!match) throw new SipParseError(`bad Via: ${clip(value)}`);
  const [, name = "", version = "", transport = "", sentBy = ""] = match;
  if (!TOKEN.test(name) || !TOKEN.test(version) || !TOKEN.test(transport)) throw new SipParseError(`bad Via protocol: ${clip(value)}`);
  const { host, port } = parseHostPort(sentBy);
  const via: Via = { protocol: `${name}/${version}`.toUpperCase(), transport: transport.toUpperCase(), host, params: parseParams(params) };
  if (port !== undefined) via.port = port;
  const rport = via.params.rport;
  if (rport !== undefined && rport !== null && !/^\d{1,5}$/.test(rport)) throw new SipParseError(`bad Via rport: ${clip(value)}`);
  return via;
}

export function formatVia(via: Via): string {
  return `${via.protocol}/${via.transport} ${formatHostPort(via.host, via.port)}${formatParams(via.params)}`;
}

/** The sent-by of a Via as a comparable string (host lower-cased, default port filled in). */
export function sentByKey(via: Via): string {
  return `${via.host.toLowerCase()}:${via.port ?? DEFAULT_SIP_PORT}`;
}

export function parseNameAddress(value: string): NameAddress {
  let rest = value.trim();
  let displayName: string | undefined;
  if (rest.startsWith('"')) {
    let end = 1;
    let name = "";
    for (; end < rest.length && rest[end] !== '"'; end++) name += rest[end] === "\\" ? (rest[++end] ?? "") : rest[end];
    if (end >= rest.length) throw new SipParseError(`unterminated display name: ${clip(value)}`);
    displayName = name;
    rest = rest.slice(end + 1).trimStart();
    if (!rest.startsWith("<")) throw new SipParseError(`display name without <URI>: ${clip(value)}`);
  } else {
    const open = rest.indexOf("<");
    if (open > 0) {
      displayName = rest.slice(0, open).trim();
      rest = rest.slice(open);
    }
  }
  let uriText: string;
  let paramText: string;
  if (rest.startsWith("<")) {
    const close = rest.indexOf(">");
    if (close < 0) throw new SipParseError(`unterminated <URI>: ${clip(value)}`);
    uriText = rest.slice(1, close);
    paramText = rest.slice(close + 1).trim();
    if (paramText !== "" && !paramText.startsWith(";")) throw new SipParseError(`text after <URI>: ${clip(value)}`);
  } else {
    // Without brackets, parameters after the URI belong to the header (RFC 3261 20.10).
    const semicolon = rest.indexOf(";");
    uriText = semicolon >= 0 ? rest.slice(0, semicolon) : rest;
    paramText = semicolon >= 0 ? rest.slice(semicolon) : "";
  }
  const params = parseParams(splitOutsideQuotes(paramText, ";").slice(1));
  const address: NameAddress = { uri: parseSipUri(uriText.trim()), params };
  if (displayName !== undefined && displayName !== "") address.displayName = displayName;
  return address;
}

export function formatNameAddress(address: NameAddress): string {
  const name = address.displayName === undefined ? "" : `"${address.displayName.replace(/(["\\])/g, "\\$1")}" `;
  return `${name}<${formatSipUri(address.uri)}>${formatParams(address.params)}`;
}

export function parseCSeq(value: string): CSeq {
  const match = /^(\d{1,10})\s+(\S+)$/.exec(value.trim());
  const seq = Number(match?.[1]);
  if (!match || !TOKEN.test(match[2]!) || seq >= 2 ** 31) throw new SipParseError(`bad CSeq: ${clip(value)}`);
  return { seq, method: match[2]! };
}

export function parseMaxForwards(value: string): number {
  const hops = Number(value.trim());
  if (!/^\d{1,3}$/.test(value.trim()) || hops > 255) throw new SipParseError(`bad Max-Forwards: ${clip(value)}`);
  return hops;
}

/** Splits on `separator` outside double-quoted strings. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (quoted && text[i] === "\\") i++;
    else if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text[i] === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
