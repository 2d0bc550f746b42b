import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config.js";
import { parseRtpPorts, parseSipAllow } from "../../../src/telephony/sip-access.js";

describe("PARLEY_SIP_ALLOW", () => {
  it("allows nobody when empty, listed addresses and CIDRs when set, everyone only with *", () => {
    expect(parseSipAllow("")("127.0.0.1")).toBe(false);
    const allow = parseSipAllow("203.0.113.7, 10.1.0.0/16");
    expect(allow("203.0.113.7")).toBe(true);
    expect(allow("203.0.113.8")).toBe(false);
    expect(allow("10.1.200.3")).toBe(true);
    expect(allow("::ffff:10.1.200.3")).toBe(true);
    expect(allow("10.2.0.1")).toBe(false);
    expect(allow("::1")).toBe(false);
    expect(parseSipAllow("*")("198.51.100.1")).toBe(true);
    expect(parseSipAllow("0.0.0.0/0")("198.51.100.1")).toBe(true);
  });

  it("names the variable for entries that are not addresses", () => {
    expect(() => parseSipAllow("10.0.0.0/33")).toThrow(ConfigError);
    expect(() => parseSipAllow("trunk.example.com")).toThrow(/PARLEY_SIP_ALLOW: "trunk.example.com" is not an IPv4 address/);
  });

  it("refuses a malformed prefix length, naming the entry, instead of reading it as /0 (everyone)", () => {
    // "10.0.0.1/" used to parse as 10.0.0.1/0 and let any source in.
    expect(() => parseSipAllow("203.0.113.7, 10.0.0.1/")).toThrow(/PARLEY_SIP_ALLOW: "10\.0\.0\.1\/" is not an IPv4 address or CIDR/);
    for (const bad of ["10.0.0.1/", "10.0.0.1//8", "10.0.0.1/8/8", "10.0.0.1/ 8", "10.0.0.1 /8", "10.0.0.1/08", "10.0.0.1/+8", "10.0.0.1/8.0", "10.0.0.1/0x8", "10.0.0.1/1e1", "/8", "10.0.0.01", "10.0.0.1 10.0.0.2"]) {
      expect(() => parseSipAllow(`203.0.113.7,${bad}`), bad).toThrow(`"${bad.trim()}"`);
    }
    expect(parseSipAllow("10.0.0.1/32, 10.1.0.0/16, 10.2.0.0/0")("198.51.100.1")).toBe(true);
    expect(parseSipAllow("10.0.0.1/32,")("10.0.0.1")).toBe(true);
  });
});

describe("PARLEY_RTP_PORTS", () => {
  it("reads min-max and refuses anything else", () => {
    expect(parseRtpPorts("10000-20000")).toEqual([10000, 20000]);
    for (const bad of ["20000-10000", "80-90", "10000", "10000-70000", "a-b"]) expect(() => parseRtpPorts(bad), bad).toThrow(/PARLEY_RTP_PORTS/);
  });
});
