import { isIPv4 } from "node:net";
import { unmapIpv4 } from "../../engine/index.js";
import { ConfigError, type Config } from "../config.js";

/** The SIP gateway's checked access settings. */
export interface SipAccess {
  /** Whether a source address may send out-of-dialog requests (PARLEY_SIP_ALLOW). */
  allowed: (address: string) => boolean;
  rtpPortRange: [number, number];
}

/**
 * Reads PARLEY_SIP_ALLOW and PARLEY_RTP_PORTS, throwing a ConfigError that names the bad one.
 * Start-up calls it before the engine loads: a bad value must stop the process, not leave it
 * running with its engine workers.
 */
export function readSipAccess(sip: Config["sip"]): SipAccess {
  return { allowed: parseSipAllow(sip.allow), rtpPortRange: parseRtpPorts(sip.rtpPorts) };
}

/**
 * Which sources may send Parley INVITEs (toll-fraud guard): `PARLEY_SIP_ALLOW` lists IPv4
 * addresses and CIDRs, or `*` for everyone (only when said explicitly). Empty: nobody.
 */
export function parseSipAllow(raw: string): (address: string) => boolean {
  const entries = raw.split(",").map((e) => e.trim()).filter(Boolean);
  if (entries.includes("*")) return () => true;
  const ranges = entries.map((entry) => {
    // Strict: a bare or odd prefix length ("10.0.0.1/" read as /0) would let everyone in.
    const match = /^([^/\s]+)(?:\/(0|[1-9]\d?))?$/.exec(entry);
    const base = match?.[1];
    const bits = match?.[2] === undefined ? 32 : Number(match[2]);
    if (!base || !isIPv4(base) || bits > 32) {
      throw new ConfigError("PARLEY_SIP_ALLOW", `"${entry}" is not an IPv4 address or CIDR such as 203.0.113.7 or 203.0.113.0/24 (or * for any source)`);
    }
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return { network: (ipv4ToInt(base) & mask) >>> 0, mask };
  });
  return (address) => {
    const plain = unmapIpv4(address);
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
