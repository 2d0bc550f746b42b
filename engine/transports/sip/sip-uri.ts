import { clip, SipParseError } from "./sip-parse-error.js";

/**
 * SIP, SIPS and tel URIs (RFC 3261 19.1, RFC 3966), enough for routing and dialogs:
 * `sip:user:password@host:port;param=value?header=value`. A `tel:` number reads as the user
 * part with an empty host, so callers find the dialled number in one place. Escaped characters
 * stay escaped (the text round-trips); parameter names are lower-cased (they are
 * case-insensitive). IPv6 hosts are written in brackets and stored without them.
 */
export const URI_SCHEMES = ["sip", "sips", "tel"] as const;
export type UriScheme = (typeof URI_SCHEMES)[number];

export interface SipUri {
  scheme: UriScheme;
  /** The user part (for `tel:`, the number); undefined when there is none. */
  user?: string;
  password?: string;
  /** Host name, IPv4 address or IPv6 address without brackets; "" for `tel:`. */
  host: string;
  port?: number;
  /** URI parameters in order; a parameter without a value (`;lr`) maps to null. */
  params: Record<string, string | null>;
  /** `?name=value&...` headers, kept as one raw string. */
  headers?: string;
}

const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9.])?$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;

export function parseSipUri(text: string): SipUri {
  const colon = text.indexOf(":");
  const scheme = text.slice(0, colon).toLowerCase();
  if (colon <= 0 || !(URI_SCHEMES as readonly string[]).includes(scheme)) throw new SipParseError(`unsupported URI: ${clip(text)}`);
  let rest = text.slice(colon + 1);
  if (/\s/.test(rest) || rest === "") throw new SipParseError(`bad URI: ${clip(text)}`);

  const uri: SipUri = { scheme: scheme as UriScheme, host: "", params: {} };
  const question = rest.indexOf("?");
  if (question >= 0) {
    uri.headers = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  const [main = "", ...params] = rest.split(";");
  uri.params = parseParams(params);
  if (uri.scheme === "tel") {
    if (main === "") throw new SipParseError(`tel URI without a number: ${clip(text)}`);
    uri.user = main;
    return uri;
  }

  // The user part may hold ';' (user params), so the host starts after the last '@'.
  let hostPort = main;
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    const userInfo = rest.slice(0, at);
    const [hostAndParams = "", ...hostParams] = rest.slice(at + 1).split(";");
    hostPort = hostAndParams;
    uri.params = parseParams(hostParams);
    const passwordAt = userInfo.indexOf(":");
    uri.user = passwordAt >= 0 ? userInfo.slice(0, passwordAt) : userInfo;
    if (passwordAt >= 0) uri.password = userInfo.slice(passwordAt + 1);
    if (uri.user === "") throw new SipParseError(`empty user part: ${clip(text)}`);
  }
  const { host, port } = parseHostPort(hostPort);
  uri.host = host;
  if (port !== undefined) uri.port = port;
  return uri;
}

export function formatSipUri(uri: SipUri): string {
  let text = `${uri.scheme}:`;
  if (uri.user !== undefined) text += uri.password === undefined ? uri.user : `${uri.user}:${uri.password}`;
  if (uri.scheme !== "tel") {
    if (uri.user !== undefined) text += "@";
    text += formatHostPort(uri.host, uri.port);
  }
  text += formatParams(uri.params);
  if (uri.headers !== undefined) text += `?${uri.headers}`;
  return text;
}

/** `host[:port]` as in a URI or a Via sent-by; IPv6 in brackets. */
export function parseHostPort(text: string): { host: string; port?: number } {
  let host: string;
  let portText: string | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    host = text.slice(1, close);
    if (close < 0 || !IPV6.test(host) || !host.includes(":")) throw new SipParseError(`bad IPv6 host: ${clip(text)}`);
    const after = text.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) throw new SipParseError(`bad host: ${clip(text)}`);
    if (after !== "") portText = after.slice(1);
  } else {
    const colon = text.indexOf(":");
    host = colon >= 0 ? text.slice(0, colon) : text;
    if (colon >= 0) portText = text.slice(colon + 1);
    if (!HOST_NAME.test(host)) throw new SipParseError(`bad host: ${clip(text)}`);
  }
  if (portText === undefined) return { host };
  const port = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) throw new SipParseError(`bad port: ${clip(text)}`);
  return { host, port };
}

export function formatHostPort(host: string, port: number | undefined): string {
  const written = host.includes(":") ? `[${host}]` : host;
  return port === undefined ? written : `${written}:${port}`;
}

/** `name=value` pieces (already split on ';'), names lower-cased, quotes kept. */
export function parseParams(pieces: readonly string[]): Record<string, string | null> {
  const params: Record<string, string | null> = {};
  for (const piece of pieces) {
    const equals = piece.indexOf("=");
    const name = (equals >= 0 ? piece.slice(0, equals) : piece).trim().toLowerCase();
    if (name === "" || name === "__proto__") throw new SipParseError(`bad parameter in ${clip(pieces.join(";"))}`);
    params[name] = equals >= 0 ? piece.slice(equals + 1).trim() : null;
  }
  return params;
}

export function formatParams(params: Readonly<Record<string, string | null>>): string {
  return Object.entries(params)
    .map(([name, value]) => (value === null ? `;${name}` : `;${name}=${value}`))
    .join("");
}
