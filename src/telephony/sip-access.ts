import { isIPv4 } from "node:net";
import { ConfigError } from "../config.js";

/**
 * Which sources may send Parley INVITEs (toll-fraud guard): `PARLEY_SIP_ALLOW` lists IPv4
 * addresses and CIDRs, or `*` for everyone (only when said explicitly). Empty: nobody.
 */
export function parseSipAllow(raw: string): (address: string) => boolean {
  const entries = raw.split(",").map((e) => e.trim()).filter(Boolean);
  if (entries.includes("*")) return () => true;
  const ranges = entries.map((entry) => {
    const [base, bitsText] = entry.split("/");
    const bits = bitsText === undefined ? 32 : Number(bitsText);
    if (!base || !isIPv4(base) || !Number.isInteger(bits) || bits < 0 || bits > 32) {
      throw new ConfigError("PARLEY_SIP_ALLOW", `"${entry}" is not an IPv4 address or CIDR (or * for any source)`);
    }
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return { network: (ipv4ToInt(base) & mask) >>> 0, mask };
  });
  return (address) => {
    const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
    if (!isIPv4(plain)) return false;
    const value = ipv4ToInt(plain);
    return ranges.some((r) => ((value & r.mask) >>> 0) === r.network);
  };
}

/** `PARLEY_RTP_PORTS` ("10000-20000") as an inclusive range. */
export function parseRtpPorts(raw: string): [number, number] {
  const match = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(raw);
  const [min, max] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!(min >= 1024 && max <= 65535 && min < max)) throw new ConfigError("PARLEY_RTP_PORTS", `must be "min-max" within 1024-65535, got "${raw}"`);
  return [min, max];
}

function ipv4ToInt(address: string): number {
  return address.split(".").reduce((n, part) => ((n << 8) | Number(part)) >>> 0, 0);
}
