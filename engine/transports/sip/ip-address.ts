import { isIPv4 } from "node:net";

/** An IPv4-mapped IPv6 address (how a dual-stack socket sees an IPv4 peer) as plain IPv4; others as they are. */
export function unmapIpv4(address: string): string {
  return address.slice(0, 7).toLowerCase() === "::ffff:" && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/**
 * A public IPv4 address: not private (RFC 1918), shared (RFC 6598, carrier-grade NAT), loopback,
 * link-local, "this network", multicast or reserved.
 */
export function isPublicIpv4(address: string): boolean {
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
