import { isPublicIpv4, unmapIpv4 } from "./ip-address.js";

/** An RTP peer: address and port. */
export interface RtpPeer {
  address: string;
  port: number;
}

/**
 * Which sources an RTP session reads packets from, so that nobody but the far end can speak into
 * a call or make it send its audio elsewhere (RTP hijack: a stranger spraying packets at every
 * port of the range).
 *
 * Until the far end's first packet, a packet is read only from the address and port its SDP
 * names, from any port of the host the call's signalling came from (the INVITE, or the 2xx of our
 * own calls: a far end behind NAT sends from an address and port its SDP cannot know), or from
 * any port of the SDP's address when that is a public one (a trunk's media server). The first
 * packet read latches the session onto its exact address and port, which are then the only
 * source read (a new SSRC included) and where packets go (symmetric RTP, RFC 4961). Without
 * symmetric RTP, only the SDP's address and port are ever read.
 */
export class RtpSourcePolicy {
  private latched: RtpPeer | undefined;
  private readonly hosts: ReadonlySet<string>;

  constructor(
    /** The far end's SDP connection address and m= port. */
    private readonly expected: Readonly<RtpPeer>,
    /** The address the call's signalling came from, when known. */
    signalling: string | undefined,
    symmetric: boolean,
  ) {
    const hosts = new Set<string>();
    if (symmetric) {
      if (signalling !== undefined) hosts.add(unmapIpv4(signalling));
      // A private or otherwise unroutable SDP address is one we cannot reach the far end at (or a forged one): not trusted.
      if (isPublicIpv4(expected.address)) hosts.add(expected.address);
    }
    this.hosts = hosts;
    if (!symmetric) this.latched = { ...expected };
  }

  /** Where packets go: the latched source, else the SDP's address and port. */
  get remote(): Readonly<RtpPeer> {
    return this.latched ?? this.expected;
  }

  /** Whether a packet from `from` may be read. */
  admits(from: RtpPeer): boolean {
    if (this.latched) return same(from, this.latched);
    return same(from, this.expected) || this.hosts.has(unmapIpv4(from.address));
  }

  /** A packet from `from` (admitted) was good RTP: before any other, it fixes the far end. */
  heard(from: RtpPeer): void {
    this.latched ??= { address: from.address, port: from.port };
  }
}

function same(a: RtpPeer, b: RtpPeer): boolean {
  return a.port === b.port && unmapIpv4(a.address) === unmapIpv4(b.address);
}
