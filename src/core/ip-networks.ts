import { isIP } from "node:net";

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address as bytes. */
export type IpBytes = Uint8Array;

/** A network: an address and how many leading bits of it count. */
export interface IpNetwork {
  bytes: IpBytes;
  prefix: number;
}

function ipv4Bytes(address: string): IpBytes {
  return Uint8Array.from(address.split(".").map(Number));
}

/** The 16 bytes of an IPv6 address (a trailing dotted quad included; a zone id ignored). */
function ipv6Bytes(address: string): IpBytes {
  let text = address.replace(/%.*$/, "");
  const out = new Uint8Array(16);
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = ipv4Bytes(quad[1]!);
    text = text.slice(0, -quad[1]!.length) + `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const first = groups(head);
  const last = tail === undefined ? [] : groups(tail);
  const all = [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
  all.forEach((group, i) => {
    out[i * 2] = group >> 8;
    out[i * 2 + 1] = group & 0xff;
  });
  return out;
}

/** An address's bytes, or undefined when it is not an IP address. */
export function ipBytes(address: string): IpBytes | undefined {
  const plain = address.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(plain.replace(/%.*$/, ""));
  if (family === 4) return ipv4Bytes(plain);
  if (family === 6) return ipv6Bytes(plain);
  return undefined;
}

/** "10.0.0.0/8", "fd00::/8" or a single address; undefined when malformed (a bare "/" or an odd prefix too). */
export function parseIpNetwork(entry: string): IpNetwork | undefined {
  const match = /^([^/\s]+)(?:\/(0|[1-9]\d{0,2}))?$/.exec(entry.trim());
  if (!match) return undefined;
  const bytes = ipBytes(match[1]!);
  if (!bytes) return undefined;
  const prefix = match[2] === undefined ? bytes.length * 8 : Number(match[2]);
  return prefix > bytes.length * 8 ? undefined : { bytes, prefix };
}

/** Whether `address` (bytes of the same family) lies in `network`. */
export function inNetwork(address: IpBytes, network: IpNetwork): boolean {
  if (address.length !== network.bytes.length) return false;
  for (let bit = 0; bit < network.prefix; bit += 8) {
    const bits = Math.min(8, network.prefix - bit);
    const mask = (0xff << (8 - bits)) & 0xff;
    if ((address[bit / 8]! & mask) !== (network.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

/** An IPv4 address as text, for messages. */
export function ipv4Text(bytes: IpBytes): string {
  return Array.from(bytes).join(".");
}

/** Comma-separated networks or addresses ("10.1.0.0/16, fd00::/8"): the networks, or the first bad entry. */
export function parseIpNetworkList(raw: string): { networks: IpNetwork[] } | { bad: string } {
  const networks: IpNetwork[] = [];
  for (const entry of raw.split(",").map((e) => e.trim()).filter(Boolean)) {
    const network = parseIpNetwork(entry);
    if (!network) return { bad: entry };
    networks.push(network);
  }
  return { networks };
}
