import { isIPv6 } from "node:net";
import { unmapIpv4 } from "../../engine/index.js";

/**
 * The key a client address is counted under by per-address limits: an IPv4 address as it is
 * (also when it reaches an IPv6 socket as `::ffff:a.b.c.d`); an IPv6 address by its /64
 * prefix, since one host is routinely given a whole /64 and could otherwise take a fresh
 * budget with every address in it.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return "unknown";
  const plain = unmapIpv4(address);
  if (plain !== address || !isIPv6(address)) return plain;
  return `${ipv6Groups(address.replace(/%.*$/, "")).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head, tail] = address.toLowerCase().split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  let groups = part(head);
  if (tail !== undefined) {
    const rest = part(tail);
    groups = [...groups, ...Array<string>(8 - groups.length - rest.length).fill("0"), ...rest];
  }
  return groups.map((g) => (g.includes(".") ? g : parseInt(g, 16).toString(16)));
}
