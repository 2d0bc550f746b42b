import { describe, expect, it } from "vitest";
import { clientAddressKey } from "../../../src/core/client-address-key.js";
import { FixedWindowRateLimiter } from "../../../src/core/fixed-window-rate-limiter.js";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("FixedWindowRateLimiter", () => {
  it("keeps at most maxKeys windows: an attacker rotating thousands of addresses evicts the oldest windows instead of growing the map", () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter(60_000, time.now, 1000);
    expect(limiter.hit("ip:victim", 1).allowed).toBe(true);
    expect(limiter.hit("ip:victim", 1).allowed).toBe(false);
    for (let i = 0; i < 5000; i++) {
      time.advance(1);
      limiter.hit(`ip:2001:db8:${i.toString(16)}::/64`, 1);
    }
    // The oldest window went first: the victim's count starts again.
    expect(limiter.hit("ip:victim", 1).allowed).toBe(true);
    expect(limiter.size).toBe(1000);
  });

  it("drops expired windows as time passes, however few keys it holds", () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter(60_000, time.now);
    for (let i = 0; i < 500; i++) limiter.hit(`ip:10.0.${i >> 8}.${i & 255}`, 10);
    expect(limiter.size).toBe(500);
    time.advance(60_000);
    limiter.hit("ip:10.1.0.1", 10);
    expect(limiter.size).toBe(1);
  });

  it("counts a key whose window expired afresh, as the newest window", () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter(60_000, time.now);
    limiter.hit("a", 2);
    time.advance(30_000);
    limiter.hit("b", 2);
    time.advance(31_000);
    expect(limiter.hit("a", 2)).toMatchObject({ allowed: true, remaining: 1 });
    time.advance(34_000);
    // b (from 30 s) has expired; a's new window (from 61 s) has not.
    limiter.hit("c", 2);
    expect(limiter.size).toBe(2);
    expect(limiter.hit("a", 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.hit("a", 2).allowed).toBe(false);
  });
});

describe("clientAddressKey", () => {
  it("keys an IPv6 client by its /64: addresses within one /64 share one budget", () => {
    const key = clientAddressKey("2001:db8:1:2:aaaa:bbbb:cccc:1");
    expect(clientAddressKey("2001:db8:1:2::ffff")).toBe(key);
    expect(clientAddressKey("2001:0db8:0001:0002:0:0:0:9")).toBe(key);
    expect(clientAddressKey("2001:DB8:1:2::1")).toBe(key);
    expect(clientAddressKey("2001:db8:1:3::1")).not.toBe(key);
    expect(clientAddressKey("2001:db8::1")).toBe(clientAddressKey("2001:db8:0:0:1::"));
    expect(clientAddressKey("::1")).toBe(clientAddressKey("::2"));
  });

  it("keys an IPv4 client (also when it arrives IPv4-mapped on an IPv6 socket) by its address", () => {
    expect(clientAddressKey("::ffff:127.0.0.1")).toBe(clientAddressKey("127.0.0.1"));
    expect(clientAddressKey("127.0.0.1")).not.toBe(clientAddressKey("127.0.0.2"));
    expect(clientAddressKey(undefined)).toBe("unknown");
  });
});
