import { SdpError } from "./sdp-error.js";
import { effectiveConnection, effectiveDirection, type MediaDescription, type MediaDirection, type SessionDescription } from "./sdp.js";

/**
 * SDP offer/answer (RFC 3264) for one audio stream of G.711 over plain RTP: we offer PCMU,
 * PCMA and telephone-event; answering, we take the first codec of the offer we support (the
 * offerer's preference) and echo its telephone-event payload type. Other streams are refused
 * with port 0, as the answer must keep one m= line per offered stream.
 */

export const G711_CODECS = ["PCMU", "PCMA"] as const;
export type G711Codec = (typeof G711_CODECS)[number];

/** RTP/AVP static payload types (RFC 3551): usable without an rtpmap. */
const STATIC_PAYLOAD_TYPES: Record<number, G711Codec> = { 0: "PCMU", 8: "PCMA" };
const OFFERED_DTMF_PAYLOAD_TYPE = 101;
const CLOCK_RATE = 8000;
const PTIME_MS = 20;
/** The telephone events we read and send: digits 0-9 * # A-D and flash (16). */
const DTMF_EVENTS = "0-16";

export interface NegotiatedCodec {
  name: G711Codec;
  payloadType: number;
  clockRate: typeof CLOCK_RATE;
}

/** What an RTP session needs from a finished offer/answer. */
export interface NegotiatedMedia {
  /** Where to send RTP (the far end's connection address and m= port). */
  remoteAddress: string;
  remotePort: number;
  codec: NegotiatedCodec;
  /** The far end's telephone-event payload type, or null when it did not take part. */
  dtmfPayloadType: number | null;
  /** The far end's preferred packet duration (default 20); we always send 20 ms packets. */
  ptime: number;
  /** Our side's direction: whether we may send and should expect to receive. */
  direction: MediaDirection;
}

/** Our side of the session: the address written into c= and o=, and our RTP port. */
export interface LocalMedia {
  address: string;
  port: number;
  /** o= session id: any digits, kept for the whole dialog. */
  sessionId: string;
  /** o= version: bump it for each new offer in a dialog (default "0"). */
  sessionVersion?: string;
  /** o= username (default "parley"). */
  username?: string;
}

export interface OfferAnswer {
  answer: SessionDescription;
  media: NegotiatedMedia;
}

/** Our offer: one audio stream with PCMU (0), PCMA (8) and telephone-event (101) at 20 ms. */
export function createOffer(local: LocalMedia): SessionDescription {
  return describe(local, [
    audioStream(local.port, [
      { payloadType: 0, encoding: "PCMU" },
      { payloadType: 8, encoding: "PCMA" },
      { payloadType: OFFERED_DTMF_PAYLOAD_TYPE, encoding: "telephone-event" },
    ], "sendrecv"),
  ]);
}

/**
 * Answers an offer: the first usable audio stream gets the offer's first G.711 codec (and its
 * telephone-event), every other stream is refused. Throws SdpError when nothing is usable.
 */
export function answerOffer(offer: SessionDescription, local: LocalMedia): OfferAnswer {
  let chosen: { index: number; media: NegotiatedMedia } | undefined;
  let failure: SdpError | undefined;
  offer.media.forEach((stream, index) => {
    if (chosen || stream.media !== "audio" || stream.port === 0) return;
    try {
      chosen = { index, media: negotiate(offer, stream) };
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      failure ??= error;
    }
  });
  if (!chosen) throw failure ?? new SdpError("no_audio", "the offer has no active audio stream");
  const { index, media } = chosen;
  const streams = offer.media.map((stream, i): MediaDescription => {
    if (i !== index) return emptyStream(stream.media, 0, stream.protocol, [stream.formats[0]!]);
    const formats: { payloadType: number; encoding: string }[] = [{ payloadType: media.codec.payloadType, encoding: media.codec.name }];
    if (media.dtmfPayloadType !== null) formats.push({ payloadType: media.dtmfPayloadType, encoding: "telephone-event" });
    return audioStream(local.port, formats, media.direction);
  });
  return { answer: describe(local, streams), media };
}

/** Reads the answer to one of our offers (a single audio stream). Throws SdpError when it refused. */
export function readAnswer(answer: SessionDescription): NegotiatedMedia {
  const stream = answer.media.find((media) => media.media === "audio");
  if (!stream || stream.port === 0) throw new SdpError("no_audio", "the answer refused the audio stream");
  return negotiate(answer, stream);
}

/** Picks codec and telephone-event from the far end's stream; direction is turned to our side's. */
function negotiate(session: SessionDescription, stream: MediaDescription): NegotiatedMedia {
  if (stream.protocol !== "RTP/AVP") throw new SdpError("no_common_codec", `unsupported transport ${stream.protocol}`);
  const connection = effectiveConnection(session, stream);
  if (!connection) throw new SdpError("malformed", "malformed SDP: the audio stream has no connection address");
  if (connection.addressType !== "IP4") throw new SdpError("unsupported_address", `unsupported address type ${connection.addressType}`);
  let codec: NegotiatedCodec | undefined;
  for (const format of stream.formats) {
    const name = codecOf(stream, Number(format));
    if (name) {
      codec = { name, payloadType: Number(format), clockRate: CLOCK_RATE };
      break;
    }
  }
  if (!codec) throw new SdpError("no_common_codec", `no PCMU or PCMA among payload types ${stream.formats.join(" ")}`);
  const dtmf = stream.rtpMaps.find(
    (map) => map.encoding.toLowerCase() === "telephone-event" && map.clockRate === CLOCK_RATE && stream.formats.includes(String(map.payloadType)),
  );
  return {
    remoteAddress: connection.address,
    remotePort: stream.port,
    codec,
    dtmfPayloadType: dtmf?.payloadType ?? null,
    ptime: stream.ptime ?? PTIME_MS,
    direction: mirror(effectiveDirection(session, stream)),
  };
}

/** The G.711 codec a payload type names: its rtpmap when present, else the static assignment. */
function codecOf(stream: MediaDescription, payloadType: number): G711Codec | undefined {
  if (!Number.isInteger(payloadType) || payloadType < 0 || payloadType > 127) return undefined;
  const map = stream.rtpMaps.find((m) => m.payloadType === payloadType);
  if (!map) return STATIC_PAYLOAD_TYPES[payloadType];
  const name = map.encoding.toUpperCase();
  const mono = map.channels === null || map.channels === 1;
  return (G711_CODECS as readonly string[]).includes(name) && map.clockRate === CLOCK_RATE && mono ? (name as G711Codec) : undefined;
}

/** The mirror image: what the other side sends, we receive. */
function mirror(theirs: MediaDirection): MediaDirection {
  if (theirs === "sendonly") return "recvonly";
  if (theirs === "recvonly") return "sendonly";
  return theirs;
}

function describe(local: LocalMedia, media: MediaDescription[]): SessionDescription {
  return {
    origin: { username: local.username ?? "parley", sessionId: local.sessionId, sessionVersion: local.sessionVersion ?? "0", addressType: "IP4", address: local.address },
    sessionName: "Parley",
    connection: { addressType: "IP4", address: local.address },
    timing: { start: 0, stop: 0 },
    direction: null,
    attributes: [],
    media,
  };
}

function emptyStream(media: string, port: number, protocol: string, formats: string[]): MediaDescription {
  return { media, port, protocol, formats, connection: null, rtpMaps: [], formatParameters: [], ptime: null, direction: null, attributes: [] };
}

function audioStream(port: number, formats: { payloadType: number; encoding: string }[], direction: MediaDirection): MediaDescription {
  const stream = emptyStream("audio", port, "RTP/AVP", formats.map((f) => String(f.payloadType)));
  stream.rtpMaps = formats.map(({ payloadType, encoding }) => ({ payloadType, encoding, clockRate: CLOCK_RATE, channels: null }));
  stream.formatParameters = formats.filter((f) => f.encoding === "telephone-event").map((f) => ({ payloadType: f.payloadType, parameters: DTMF_EVENTS }));
  stream.ptime = PTIME_MS;
  stream.direction = direction;
  return stream;
}
