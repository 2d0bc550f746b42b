import dgram from "node:dgram";
import { getTopVia, parseSipMessage, type SipResponse } from "../../engine/transports/sip/sip-message.js";

const HOST = "127.0.0.1";

export interface RawSipPeer {
  port: number;
  /** Every response received so far, with its size in bytes. */
  responses: { response: SipResponse; bytes: number }[];
  /** Bytes sent so far. */
  readonly sentBytes: number;
  /** Sends `text` (LF or CRLF line ends) to 127.0.0.1:`to`. */
  send(text: string, to: number): void;
  /** Resolves once `count` responses have arrived in all. */
  received(count: number): Promise<void>;
  /** The responses to the request whose top Via had `branch`. */
  to(branch: string): SipResponse[];
  close(): Promise<void>;
}

/**
 * A plain UDP socket on loopback that sends hand-written SIP requests and keeps every response it
 * gets: a flooder, or a victim that others try to aim responses at.
 */
export async function rawSipPeer(host = HOST, port = 0): Promise<RawSipPeer> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => resolve());
  });
  const responses: RawSipPeer["responses"] = [];
  const waiters: (() => void)[] = [];
  let sentBytes = 0;
  socket.on("message", (data) => {
    const message = parseSipMessage(data);
    if (message.kind === "response") responses.push({ response: message, bytes: data.byteLength });
    for (const waiter of waiters.splice(0)) waiter();
  });
  return {
    port: socket.address().port,
    responses,
    get sentBytes() {
      return sentBytes;
    },
    send(text, to) {
      const datagram = Buffer.from(text.replace(/\r?\n/g, "\r\n"));
      sentBytes += datagram.byteLength;
      socket.send(datagram, to, HOST);
    },
    received(count) {
      return new Promise((resolve) => {
        const check = () => (responses.length >= count ? resolve() : waiters.push(check));
        check();
      });
    },
    to(branch) {
      return responses.map((r) => r.response).filter((response) => getTopVia(response).params.branch === branch);
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/**
 * A caller's request as it arrives from 127.0.0.1:`port`: an INVITE carries an SDP offer, as real
 * ones do. `via` replaces the Via's sent-by (and may add parameters); `toTag` makes it in-dialog.
 */
export function requestText(port: number, branch: string, options: { method?: string; toTag?: string; via?: string; user?: string } = {}): string {
  const method = options.method ?? "INVITE";
  const user = options.user ?? "15551234";
  const sdp = `v=0\no=- 1 1 IN IP4 ${HOST}\ns=-\nc=IN IP4 ${HOST}\nt=0 0\nm=audio 4000 RTP/AVP 0 101\na=rtpmap:0 PCMU/8000\na=rtpmap:101 telephone-event/8000\n`;
  const body = method === "INVITE" ? sdp : "";
  return `${method} sip:${user}@${HOST} SIP/2.0
Via: SIP/2.0/UDP ${options.via ?? `${HOST}:${port}`};branch=${branch}
From: <sip:caller@${HOST}:${port}>;tag=f${branch}
To: <sip:${user}@${HOST}>${options.toTag ? `;tag=${options.toTag}` : ""}
Call-ID: ${branch}@${HOST}
CSeq: 1 ${method}
Contact: <sip:caller@${HOST}:${port}>
Max-Forwards: 70
${body ? "Content-Type: application/sdp\n" : ""}Content-Length: ${Buffer.byteLength(body.replace(/\n/g, "\r\n"))}

${body}`;
}
