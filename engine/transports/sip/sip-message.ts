import { SipHeaders } from "./sip-headers.js";
import {
  parseCSeq,
  parseMaxForwards,
  parseNameAddress,
  parseVia,
  type CSeq,
  type NameAddress,
  type Via,
} from "./sip-header-values.js";
import { clip, SipParseError } from "./sip-parse-error.js";
import type { SipUri } from "./sip-uri.js";

/**
 * SIP messages as carried in one UDP datagram (RFC 3261 7): parse and serialize. Parsing
 * accepts what real peers send (compact names, folded lines, bare LF, comma lists, no
 * Content-Length on UDP) and refuses anything the stack could not act on with a
 * SipParseError; it never throws anything else, and its work is bounded by the size caps.
 */

export const MAX_DATAGRAM_BYTES = 65_535;
export const MAX_HEADER_LINES = 256;
export const SIP_VERSION = "SIP/2.0";

interface SipMessageBase {
  headers: SipHeaders;
  /** The body, exactly Content-Length bytes (or the rest of the datagram when it was absent). */
  body: Buffer;
}

export interface SipRequest extends SipMessageBase {
  kind: "request";
  /** Upper-case by convention; methods are case-sensitive (RFC 3261 7.1). */
  method: string;
  /** The Request-URI as written. */
  uri: string;
}

export interface SipResponse extends SipMessageBase {
  kind: "response";
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** Headers every request and response must carry for the transaction layer to handle it. */
const REQUIRED_HEADERS = ["Via", "From", "To", "Call-ID", "CSeq"] as const;

export function parseSipMessage(datagram: Uint8Array): SipMessage {
  if (datagram.byteLength > MAX_DATAGRAM_BYTES) throw new SipParseError(`datagram of ${datagram.byteLength} bytes exceeds ${MAX_DATAGRAM_BYTES}`);
  // CRLFs before the start line are ignored (RFC 3261 7.5).
  let start = 0;
  while (datagram[start] === 0x0d || datagram[start] === 0x0a) start++;
  const end = findHeaderEnd(datagram, start);
  if (!end) throw new SipParseError(start === datagram.byteLength ? "empty datagram" : "no empty line after the headers");

  const lines = unfold(Buffer.from(datagram.buffer, datagram.byteOffset + start, end.headerEnd - start).toString("utf8").split(/\r?\n/));
  const message = parseStartLine(lines[0]!);
  if (lines.length - 1 > MAX_HEADER_LINES) throw new SipParseError(`more than ${MAX_HEADER_LINES} header lines`);
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon).trimEnd() : "";
    if (!/^[A-Za-z0-9\-.!%*_+`'~]+$/.test(name)) throw new SipParseError(`bad header line: ${clip(line)}`);
    message.headers.append(name, line.slice(colon + 1).trim());
  }
  for (const name of REQUIRED_HEADERS) if (!message.headers.has(name)) throw new SipParseError(`missing ${name} header`);
  // Read the structured headers once so a message that passes is one the stack can use.
  const cseq = getCSeq(message);
  getVias(message);
  getFrom(message);
  getTo(message);
  if (message.kind === "request") {
    if (cseq.method !== message.method) throw new SipParseError(`CSeq method ${cseq.method} does not match ${message.method}`);
    if (message.headers.has("Max-Forwards")) getMaxForwards(message);
  }

  const available = datagram.byteLength - end.bodyStart;
  const lengths = message.headers.getAll("Content-Length").flatMap((value) => value.split(",")).map((value) => value.trim());
  if (lengths.some((value) => value !== lengths[0])) throw new SipParseError("conflicting Content-Length headers");
  let bodyLength = available;
  if (lengths[0] !== undefined) {
    if (!/^\d{1,10}$/.test(lengths[0])) throw new SipParseError(`bad Content-Length: ${clip(lengths[0])}`);
    bodyLength = Number(lengths[0]);
    // Extra bytes after the body are discarded (RFC 3261 18.3); fewer is a truncated message.
    if (bodyLength > available) throw new SipParseError(`body of ${available} bytes is shorter than Content-Length ${bodyLength}`);
  }
  message.body = Buffer.from(datagram.subarray(end.bodyStart, end.bodyStart + bodyLength));
  return message;
}

/** Writes CRLF line endings and a Content-Length that matches the body (in place of any there was). */
export function serializeSipMessage(message: SipMessage): Buffer {
  const headers = message.headers.clone().set("Content-Length", String(message.body.byteLength));
  const startLine = message.kind === "request" ? `${message.method} ${message.uri} ${SIP_VERSION}` : `${SIP_VERSION} ${message.status} ${message.reason}`;
  const head = [startLine, ...headers.lines().map(({ name, value }) => `${name}: ${value}`), "", ""].join("\r\n");
  return Buffer.concat([Buffer.from(head, "utf8"), message.body]);
}

export function getVias(message: SipMessage): Via[] {
  return message.headers.getAll("Via").map(parseVia);
}

export function getTopVia(message: SipMessage): Via {
  const top = message.headers.get("Via");
  if (top === undefined) throw new SipParseError("missing Via header");
  return parseVia(top);
}

export function getFrom(message: SipMessage): NameAddress {
  return parseNameAddress(requireHeader(message, "From"));
}

export function getTo(message: SipMessage): NameAddress {
  return parseNameAddress(requireHeader(message, "To"));
}

export function getCallId(message: SipMessage): string {
  return requireHeader(message, "Call-ID");
}

export function getCSeq(message: SipMessage): CSeq {
  return parseCSeq(requireHeader(message, "CSeq"));
}

/** Max-Forwards, or undefined when absent. */
export function getMaxForwards(message: SipMessage): number | undefined {
  const value = message.headers.get("Max-Forwards");
  return value === undefined ? undefined : parseMaxForwards(value);
}

/** The first Contact's URI, or undefined when there is none (or it is `*`). */
export function getContactUri(message: SipMessage): SipUri | undefined {
  const value = message.headers.get("Contact");
  return value === undefined || value.trim() === "*" ? undefined : parseNameAddress(value).uri;
}

export interface ResponseExtras {
  /** Added to To when the request's To has no tag (the UAS's dialog tag, RFC 3261 8.2.6.2). */
  toTag?: string;
  headers?: ReadonlyArray<readonly [name: string, value: string]>;
  body?: Buffer;
}

/**
 * A response to `request` as RFC 3261 8.2.6 builds it: Via (all, in order), From, To, Call-ID
 * and CSeq copied; a Timestamp echoed on 100 (8.2.6.1). A To tag is the caller's choice:
 * pass `toTag` (ignored when the request's To already has one).
 */
export function buildResponse(request: SipRequest, status: number, reason: string, extras: ResponseExtras = {}): SipResponse {
  if (!Number.isInteger(status) || status < 100 || status > 699) throw new RangeError(`bad SIP status ${status}`);
  const headers = new SipHeaders();
  for (const name of ["Via", "From", "To", "Call-ID", "CSeq"]) {
    for (const line of request.headers.lines()) if (line.name === name) headers.append(name, line.value);
  }
  if (extras.toTag !== undefined && getTo(request).params.tag === undefined) {
    headers.set("To", `${requireHeader(request, "To")};tag=${extras.toTag}`);
  }
  const timestamp = request.headers.get("Timestamp");
  if (status === 100 && timestamp !== undefined) headers.append("Timestamp", timestamp);
  for (const [name, value] of extras.headers ?? []) headers.append(name, value);
  return { kind: "response", status, reason, headers, body: extras.body ?? Buffer.alloc(0) };
}

function requireHeader(message: SipMessage, name: string): string {
  const value = message.headers.get(name);
  if (value === undefined) throw new SipParseError(`missing ${name} header`);
  return value;
}

/** Where the header section ends (before the empty line) and where the body starts. */
function findHeaderEnd(bytes: Uint8Array, from: number): { headerEnd: number; bodyStart: number } | undefined {
  for (let i = bytes.indexOf(0x0a, from); i >= 0; i = bytes.indexOf(0x0a, i + 1)) {
    const lineEnd = bytes[i - 1] === 0x0d ? i - 1 : i;
    if (bytes[i + 1] === 0x0a) return { headerEnd: lineEnd, bodyStart: i + 2 };
    if (bytes[i + 1] === 0x0d && bytes[i + 2] === 0x0a) return { headerEnd: lineEnd, bodyStart: i + 3 };
  }
  return undefined;
}

/** Joins continuation lines (leading whitespace) to the line before, with one space. */
function unfold(lines: string[]): string[] {
  const joined: string[] = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line)) {
      if (joined.length <= 1) throw new SipParseError("continuation line without a header");
      joined[joined.length - 1] = `${joined[joined.length - 1]!.trimEnd()} ${line.trim()}`;
    } else {
      joined.push(line);
    }
  }
  return joined;
}

function parseStartLine(line: string): SipMessage {
  const headers = new SipHeaders();
  const body = Buffer.alloc(0);
  if (line.toUpperCase().startsWith(`${SIP_VERSION} `)) {
    const match = /^SIP\/2\.0 ([1-6]\d\d)(?: (.*))?$/i.exec(line);
    if (!match) throw new SipParseError(`bad status line: ${clip(line)}`);
    return { kind: "response", status: Number(match[1]), reason: match[2] ?? "", headers, body };
  }
  const match = /^([A-Za-z0-9\-.!%*_+`'~]+) (\S+) (\S+)$/.exec(line);
  if (!match) throw new SipParseError(`bad start line: ${clip(line)}`);
  if (match[3]!.toUpperCase() !== SIP_VERSION) throw new SipParseError(`unsupported version ${clip(match[3]!)}`);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(match[2]!)) throw new SipParseError(`bad Request-URI: ${clip(match[2]!)}`);
  return { kind: "request", method: match[1]!, uri: match[2]!, headers, body };
}
