import { isIPv4 } from "node:net";

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
      if (signalling !== undefined) hosts.add(plain(signalling));
      if (isRoutable(expected.address)) hosts.add(expected.address);
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
    return same(from, this.expected) || this.hosts.has(plain(from.address));
  }

  /** A packet from `from` (admitted) was good RTP: before any other, it fixes the far end. */
  heard(from: RtpPeer): void {
    this.latched ??= { address: from.address, port: from.port };
  }
}

function same(a: RtpPeer, b: RtpPeer): boolean {
  return a.port === b.port && plain(a.address) === plain(b.address);
}

/** An IPv4-mapped IPv6 address (a dual-stack socket's view of an IPv4 peer) as plain IPv4. */
function plain(address: string): string {
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}

/**
 * A public IPv4 address: not private (RFC 1918), shared (RFC 6598, carrier-grade NAT), loopback,
 * link-local, "this network", multicast or reserved. An SDP naming one of those comes from a far
 * end we cannot reach there (or a forged one): its host is not trusted to latch from.
 */
function isRoutable(address: string): boolean {
  if (!isIPv4(address)) return false;
  const [a = 0, b = 0] = address.split(".").map(Number);
  return !(
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 100 && b >= 64 && b < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && b === 168)
  );
}
