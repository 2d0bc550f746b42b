import { SdpError } from "./sdp-error.js";

/**
 * SDP (RFC 4566) for audio calls: the lines offer/answer needs (v, o, s, c, t, m, a), with
 * `a=rtpmap`, `a=fmtp`, `a=ptime` and the direction attributes parsed into fields and every
 * other attribute kept, in order, so that `writeSdp(parseSdp(text))` keeps what matters.
 *
 * Structural lines (v, o, c, m, t) must be well formed; attributes are read leniently (an
 * rtpmap we cannot read stays a plain attribute) because peers disagree on the details.
 * The i, u, e, p, b, z, k and r lines carry nothing an audio call needs and are dropped.
 */

export const MEDIA_DIRECTIONS = ["sendrecv", "sendonly", "recvonly", "inactive"] as const;
export type MediaDirection = (typeof MEDIA_DIRECTIONS)[number];

export interface SdpConnection {
  /** `IP4` or `IP6`. */
  addressType: string;
  /** Unicast address (a multicast TTL suffix is dropped). */
  address: string;
}

export interface SdpOrigin {
  username: string;
  /** Kept as text: the numbers may exceed 2^53. */
  sessionId: string;
  sessionVersion: string;
  addressType: string;
  address: string;
}

export interface SdpAttribute {
  name: string;
  /** The text after the first colon; null for flag attributes (`a=recvonly`). */
  value: string | null;
}

/** `a=rtpmap:<pt> <encoding>/<clockRate>[/<channels>]` */
export interface RtpMap {
  payloadType: number;
  encoding: string;
  clockRate: number;
  channels: number | null;
}

/** `a=fmtp:<pt> <parameters>` */
export interface FormatParameters {
  payloadType: number;
  parameters: string;
}

export interface MediaDescription {
  /** `audio`, `video`, ... */
  media: string;
  /** 0 marks a rejected or disabled stream. */
  port: number;
  /** `RTP/AVP` for plain RTP. */
  protocol: string;
  /** Formats in preference order; RTP payload types as decimal text. */
  formats: string[];
  /** Overrides the session-level connection. */
  connection: SdpConnection | null;
  rtpMaps: RtpMap[];
  formatParameters: FormatParameters[];
  ptime: number | null;
  /** Null when this stream does not say (the session-level one, else sendrecv, applies). */
  direction: MediaDirection | null;
  attributes: SdpAttribute[];
}

export interface SessionDescription {
  origin: SdpOrigin;
  sessionName: string;
  connection: SdpConnection | null;
  timing: { start: number; stop: number };
  direction: MediaDirection | null;
  attributes: SdpAttribute[];
  media: MediaDescription[];
}

/** Parses an SDP body; throws SdpError("malformed") when it is not SDP. */
export function parseSdp(text: string): SessionDescription {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (lines[0]?.trim() !== "v=0") throw malformed("the body does not start with v=0");
  let origin: SdpOrigin | undefined;
  const session: Omit<SessionDescription, "origin"> = {
    sessionName: "-",
    connection: null,
    timing: { start: 0, stop: 0 },
    direction: null,
    attributes: [],
    media: [],
  };
  let current: MediaDescription | undefined;
  for (const line of lines.slice(1)) {
    const match = /^([a-z])=(.*)$/.exec(line);
    if (!match) throw malformed(`not an SDP line: ${JSON.stringify(line.slice(0, 80))}`);
    const type = match[1]!;
    const value = match[2]!.trim();
    switch (type) {
      case "o":
        origin = parseOrigin(value);
        break;
      case "s":
        if (!current) session.sessionName = value;
        break;
      case "t":
        if (!current) session.timing = parseTiming(value);
        break;
      case "c":
        if (current) current.connection = parseConnection(value);
        else session.connection = parseConnection(value);
        break;
      case "m":
        current = parseMediaLine(value);
        session.media.push(current);
        break;
      case "a":
        if (current) addMediaAttribute(current, value);
        else if (isDirection(value)) session.direction = value;
        else session.attributes.push(parseAttribute(value));
        break;
    }
  }
  if (!origin) throw malformed("no o= line");
  return { origin, ...session };
}

/** Writes a session description with CRLF line endings, in the order RFC 4566 requires. */
export function writeSdp(session: SessionDescription): string {
  const { origin } = session;
  const lines = [
    "v=0",
    `o=${origin.username} ${origin.sessionId} ${origin.sessionVersion} IN ${origin.addressType} ${origin.address}`,
    `s=${session.sessionName || "-"}`,
  ];
  if (session.connection) lines.push(connectionLine(session.connection));
  lines.push(`t=${session.timing.start} ${session.timing.stop}`);
  if (session.direction) lines.push(`a=${session.direction}`);
  for (const attribute of session.attributes) lines.push(attributeLine(attribute));
  for (const media of session.media) {
    lines.push(`m=${media.media} ${media.port} ${media.protocol} ${media.formats.join(" ")}`);
    if (media.connection) lines.push(connectionLine(media.connection));
    for (const map of media.rtpMaps) {
      lines.push(`a=rtpmap:${map.payloadType} ${map.encoding}/${map.clockRate}${map.channels === null ? "" : `/${map.channels}`}`);
    }
    for (const fmtp of media.formatParameters) lines.push(`a=fmtp:${fmtp.payloadType} ${fmtp.parameters}`);
    if (media.ptime !== null) lines.push(`a=ptime:${media.ptime}`);
    for (const attribute of media.attributes) lines.push(attributeLine(attribute));
    if (media.direction) lines.push(`a=${media.direction}`);
  }
  return lines.map((line) => `${line}\r\n`).join("");
}

/** A stream's direction as its author meant it: the stream's own, else the session's, else sendrecv. */
export function effectiveDirection(session: SessionDescription, media: MediaDescription): MediaDirection {
  return media.direction ?? session.direction ?? "sendrecv";
}

/** A stream's connection: its own c= line, else the session's. */
export function effectiveConnection(session: SessionDescription, media: MediaDescription): SdpConnection | null {
  return media.connection ?? session.connection;
}

function malformed(message: string): SdpError {
  return new SdpError("malformed", `malformed SDP: ${message}`);
}

function isDirection(value: string): value is MediaDirection {
  return (MEDIA_DIRECTIONS as readonly string[]).includes(value);
}

function parseOrigin(value: string): SdpOrigin {
  const parts = value.split(/\s+/);
  if (parts.length !== 6 || parts[3] !== "IN") throw malformed(`bad o= line: ${value}`);
  const [username, sessionId, sessionVersion, , addressType, address] = parts as [string, string, string, string, string, string];
  return { username, sessionId, sessionVersion, addressType, address };
}

function parseTiming(value: string): { start: number; stop: number } {
  const parts = value.split(/\s+/);
  const [start, stop] = parts.map(Number);
  if (parts.length !== 2 || !Number.isSafeInteger(start) || !Number.isSafeInteger(stop)) throw malformed(`bad t= line: ${value}`);
  return { start: start!, stop: stop! };
}

function parseConnection(value: string): SdpConnection {
  const parts = value.split(/\s+/);
  if (parts.length !== 3 || parts[0] !== "IN" || !parts[2]) throw malformed(`bad c= line: ${value}`);
  return { addressType: parts[1]!, address: parts[2].split("/")[0]! };
}

function connectionLine(connection: SdpConnection): string {
  return `c=IN ${connection.addressType} ${connection.address}`;
}

function parseMediaLine(value: string): MediaDescription {
  const [media, portField, protocol, ...formats] = value.split(/\s+/);
  const port = Number(portField?.split("/")[0]);
  if (!media || !protocol || formats.length === 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw malformed(`bad m= line: ${value}`);
  }
  return { media, port, protocol, formats, connection: null, rtpMaps: [], formatParameters: [], ptime: null, direction: null, attributes: [] };
}

function parseAttribute(value: string): SdpAttribute {
  const colon = value.indexOf(":");
  return colon < 0 ? { name: value, value: null } : { name: value.slice(0, colon), value: value.slice(colon + 1) };
}

function attributeLine(attribute: SdpAttribute): string {
  return attribute.value === null ? `a=${attribute.name}` : `a=${attribute.name}:${attribute.value}`;
}

function addMediaAttribute(media: MediaDescription, value: string): void {
  if (isDirection(value)) {
    media.direction = value;
    return;
  }
  const attribute = parseAttribute(value);
  const text = attribute.value ?? "";
  if (attribute.name === "rtpmap") {
    const match = /^(\d{1,3})\s+([^/\s]+)\/(\d+)(?:\/(\d+))?$/.exec(text);
    if (match) {
      media.rtpMaps.push({ payloadType: Number(match[1]), encoding: match[2]!, clockRate: Number(match[3]), channels: match[4] === undefined ? null : Number(match[4]) });
      return;
    }
  } else if (attribute.name === "fmtp") {
    const match = /^(\d{1,3})\s+(.*)$/.exec(text);
    if (match) {
      media.formatParameters.push({ payloadType: Number(match[1]), parameters: match[2]! });
      return;
    }
  } else if (attribute.name === "ptime") {
    const ptime = Number(text);
    if (Number.isFinite(ptime) && ptime > 0) {
      media.ptime = ptime;
      return;
    }
  }
  media.attributes.push(attribute);
}
