import net from "node:net";
import { describe, expect, it } from "vitest";
import { parseIpNetworkList } from "../../../src/core/ip-networks.js";
import { addressRefusal, checkWebhookTarget, guardedLookup, REFUSED_ADDRESS, type HostResolver, type WebhookNetworkPolicy } from "../../../src/services/webhook-network-policy.js";
import { startLoopbackHttpServer } from "../../helpers/loopback-peers.js";

const strict: WebhookNetworkPolicy = { allowLoopback: false, allowNetworks: [] };
const networks = (raw: string) => {
  const parsed = parseIpNetworkList(raw);
  if ("bad" in parsed) throw new Error(parsed.bad);
  return parsed.networks;
};
const resolvingTo = (...addresses: string[]): HostResolver => async () => addresses.map((address) => ({ address, family: net.isIP(address) }));

describe("addressRefusal", () => {
  it("refuses every kind of non-public address, naming its kind", () => {
    const cases: Array<[string, RegExp]> = [
      ["127.0.0.1", /loopback/],
      ["127.255.0.9", /loopback/],
      ["::1", /loopback/],
      ["0.0.0.0", /unspecified/],
      ["::", /unspecified/],
      ["10.0.0.5", /private address \(RFC 1918\)/],
      ["172.16.0.1", /RFC 1918/],
      ["172.31.255.255", /RFC 1918/],
      ["192.168.1.10", /RFC 1918/],
      ["fd00::1", /unique local/],
      ["fc12:3456::1", /unique local/],
      ["fec0::1", /site-local/],
      ["100.64.0.1", /carrier-grade NAT/],
      ["169.254.169.254", /link-local .*metadata/],
      ["fe80::1%eth0", /link-local/],
      ["224.0.0.1", /multicast/],
      ["ff02::1", /multicast/],
      ["240.0.0.1", /reserved/],
      ["255.255.255.255", /reserved/],
      ["198.18.0.1", /benchmarking/],
      ["192.0.2.1", /documentation/],
      ["2001:db8::1", /documentation/],
      ["::a00:5", /IPv4-compatible/],
    ];
    for (const [address, kind] of cases) expect(addressRefusal(address, strict), address).toMatch(kind);
  });

  it("judges IPv6 forms that carry an IPv4 address by the address inside", () => {
    expect(addressRefusal("::ffff:10.0.0.1", strict)).toBe("::ffff:10.0.0.1 (10.0.0.1) is a private address (RFC 1918)");
    expect(addressRefusal("::ffff:7f00:1", strict)).toMatch(/\(127\.0\.0\.1\) is a loopback address/);
    expect(addressRefusal("64:ff9b::a9fe:a9fe", strict)).toMatch(/\(169\.254\.169\.254\) is a link-local/);
    expect(addressRefusal("2002:c0a8:0101::1", strict)).toMatch(/\(192\.168\.1\.1\) is a private/);
    expect(addressRefusal("::ffff:8.8.8.8", strict)).toBeUndefined();
    expect(addressRefusal("2002:0808:0808::1", strict)).toBeUndefined();
  });

  it("judges IPv4-translated addresses (::ffff:0:0:0/96, SIIT) by the IPv4 inside", () => {
    expect(addressRefusal("::ffff:0:7f00:1", strict)).toBe("::ffff:0:7f00:1 (127.0.0.1) is a loopback address");
    expect(addressRefusal("::ffff:0:a00:1", strict)).toBe("::ffff:0:a00:1 (10.0.0.1) is a private address (RFC 1918)");
    expect(addressRefusal("::ffff:0:a9fe:a9fe", strict)).toMatch(/\(169\.254\.169\.254\) is a link-local address/);
    expect(addressRefusal("::ffff:0:192.168.1.1", strict)).toMatch(/\(192\.168\.1\.1\) is a private/);
    expect(addressRefusal("::ffff:0:808:808", strict)).toBeUndefined();
    // The same rules as the IPv4 inside: loopback when allowed, the allowed networks.
    expect(addressRefusal("::ffff:0:7f00:1", { allowLoopback: true, allowNetworks: [] })).toBeUndefined();
    expect(addressRefusal("::ffff:0:a01:203", { allowLoopback: false, allowNetworks: networks("10.1.0.0/16") })).toBeUndefined();
  });

  it("judges the local-use NAT64 prefix (64:ff9b:1::/48) by the IPv4 at every RFC 6052 placement, refusing if any is refused", () => {
    expect(addressRefusal("64:ff9b:1::7f00:1", strict)).toBe("64:ff9b:1::7f00:1 (127.0.0.1, read with a /96 NAT64 prefix) is a loopback address");
    expect(addressRefusal("64:ff9b:1::a00:1", strict)).toMatch(/\(10\.0\.0\.1, read with a \/96 NAT64 prefix\) is a private/);
    // 127.0.0.1 placed for a /48 prefix (bytes 6-7 and 9-10; byte 8 is RFC 6052's zero "u" octet).
    expect(addressRefusal("64:ff9b:1:7f00:0:100::", strict)).toMatch(/ is (a loopback|an unspecified)/);
    // 127.1.1.1 at one placement, the other placements reading public addresses: each placement is read.
    const loopbackAt: Array<[string, number]> = [
      ["64:ff9b:1:7f01:1:108:808:808", 48],
      ["64:ff9b:1:87f:1:101:808:808", 56],
      ["64:ff9b:1:808:7f:101:108:808", 64],
      ["64:ff9b:1:808:8:808:7f01:101", 96],
    ];
    for (const [address, length] of loopbackAt) {
      expect(addressRefusal(address, strict), address).toBe(`${address} (127.1.1.1, read with a /${length} NAT64 prefix) is a loopback address`);
    }
    // 8.8.8.8 wherever a translator looks: allowed.
    expect(addressRefusal("64:ff9b:1:808:8:808:808:808", strict)).toBeUndefined();
    // A /96 address has zeros where the other lengths look (0.0.0.0/8), so it is refused: the cost of not knowing the length.
    expect(addressRefusal("64:ff9b:1::808:808", strict)).toBe("64:ff9b:1::808:808 (0.0.0.8, read with a /64 NAT64 prefix) is an unspecified ('this network') address");
    // The operator whose webhooks go out through such a translator allows its prefix.
    expect(addressRefusal("64:ff9b:1::808:808", { allowLoopback: false, allowNetworks: networks("64:ff9b:1::/96") })).toBeUndefined();
  });

  it("allows public addresses, loopback when told to, and anything in the allowed networks", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111"]) expect(addressRefusal(address, strict), address).toBeUndefined();
    const dev: WebhookNetworkPolicy = { allowLoopback: true, allowNetworks: [] };
    expect(addressRefusal("127.0.0.1", dev)).toBeUndefined();
    expect(addressRefusal("::1", dev)).toBeUndefined();
    expect(addressRefusal("10.0.0.1", dev)).toMatch(/private/);
    const lan: WebhookNetworkPolicy = { allowLoopback: false, allowNetworks: networks("10.1.0.0/16, fd00:1::/64, 192.168.1.7") };
    expect(addressRefusal("10.1.2.3", lan)).toBeUndefined();
    expect(addressRefusal("::ffff:10.1.2.3", lan)).toBeUndefined();
    expect(addressRefusal("10.2.0.1", lan)).toMatch(/private/);
    expect(addressRefusal("fd00:1::99", lan)).toBeUndefined();
    expect(addressRefusal("fd00:2::1", lan)).toMatch(/unique local/);
    expect(addressRefusal("192.168.1.7", lan)).toBeUndefined();
    expect(addressRefusal("192.168.1.8", lan)).toMatch(/private/);
  });
});

describe("parseIpNetworkList (PARLEY_WEBHOOK_ALLOW_NETWORKS)", () => {
  it("reads CIDRs and single addresses of both families, and names the first bad entry", () => {
    expect(networks("")).toEqual([]);
    expect(networks(" 10.0.0.0/8 ,fd00::/8,192.168.1.1").map((n) => n.prefix)).toEqual([8, 8, 32]);
    for (const bad of ["10.0.0.0/", "10.0.0.0/33", "fd00::/129", "10.0.0", "lan", "10.0.0.0/8/8", "10.0.0.0/08"]) {
      expect(parseIpNetworkList(`192.168.0.0/16, ${bad}`), bad).toEqual({ bad });
    }
  });
});

describe("guardedLookup", () => {
  const lookup = (policy: WebhookNetworkPolicy, hostname: string, options: object) =>
    new Promise<{ err: NodeJS.ErrnoException | null; result: unknown }>((resolve) => {
      (guardedLookup(policy) as any)(hostname, options, (err: NodeJS.ErrnoException | null, ...result: unknown[]) => resolve({ err, result }));
    });

  it("refuses a name when any of its addresses is refused, before anything connects", async () => {
    const { err } = await lookup({ ...strict, resolve: resolvingTo("93.184.216.34", "10.0.0.5") }, "mixed.example", { all: true });
    expect(err?.code).toBe(REFUSED_ADDRESS);
    expect(err?.message).toMatch(/^mixed\.example resolves to an address webhooks may not reach: 10\.0\.0\.5 is a private address .*PARLEY_WEBHOOK_ALLOW_NETWORKS/);
  });

  it("refuses names resolving to IPv4-translated or local-use NAT64 addresses by the IPv4 inside", async () => {
    for (const [address, inside] of [["::ffff:0:7f00:1", "127.0.0.1"], ["::ffff:0:a00:1", "10.0.0.1"], ["64:ff9b:1::a9fe:a9fe", "169.254.169.254"], ["64:ff9b:1:7f01:1:108:808:808", "127.1.1.1"]]) {
      const { err, result } = await lookup({ ...strict, resolve: resolvingTo(address!) }, "sneaky.example", { all: true });
      expect(err?.code, address).toBe(REFUSED_ADDRESS);
      expect(err?.message, address).toContain(`${address} (${inside}`);
      expect(result, address).toEqual([]);
    }
    const publicInside = { ...strict, resolve: resolvingTo("::ffff:0:808:808") };
    expect((await lookup(publicInside, "ok.example", {})).result).toEqual(["::ffff:0:808:808", 6]);
  });

  it("hands back exactly the checked addresses, in both callback forms", async () => {
    const policy = { ...strict, resolve: resolvingTo("93.184.216.34", "2606:2800::1") };
    expect((await lookup(policy, "ok.example", { all: true })).result).toEqual([[{ address: "93.184.216.34", family: 4 }, { address: "2606:2800::1", family: 6 }]]);
    expect((await lookup(policy, "ok.example", {})).result).toEqual(["93.184.216.34", 4]);
    expect((await lookup(policy, "ok.example", { family: 6 })).result).toEqual(["2606:2800::1", 6]);
  });

  it("is what a connection uses: a name resolving to loopback reaches it only when loopback is allowed", async () => {
    const server = await startLoopbackHttpServer();
    try {
      const port = Number(new URL(server.url).port);
      const connect = (policy: WebhookNetworkPolicy) =>
        new Promise<string>((resolve) => {
          const socket = net.connect({ host: "receiver.example", port, lookup: guardedLookup(policy) });
          socket.once("connect", () => resolve(`connected to ${socket.remoteAddress}`)).once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
        });
      expect(await connect({ ...strict, resolve: resolvingTo("127.0.0.1") })).toBe(REFUSED_ADDRESS);
      expect(server.connections).toBe(0);
      expect(await connect({ allowLoopback: true, allowNetworks: [], resolve: resolvingTo("127.0.0.1") })).toBe("connected to 127.0.0.1");
    } finally {
      await server.close();
    }
  });
});

describe("checkWebhookTarget", () => {
  it("refuses literals and names that resolve into the service's networks with invalid_url naming why", async () => {
    const refused = async (url: string, policy: WebhookNetworkPolicy) => {
      try {
        await checkWebhookTarget(new URL(url), policy);
        return "allowed";
      } catch (err) {
        return `${(err as { code: string }).code}: ${(err as Error).message}`;
      }
    };
    expect(await refused("https://10.0.0.5/hook", strict)).toMatch(/^invalid_url: .*10\.0\.0\.5 is a private address/);
    expect(await refused("https://[::ffff:10.0.0.1]/hook", strict)).toMatch(/^invalid_url: .*\(10\.0\.0\.1\) is a private/);
    // A name's refusal names neither the address nor its kind (no map of the internal DNS).
    const viaName = await refused("https://internal.example/hook", { ...strict, resolve: resolvingTo("10.0.0.5") });
    expect(viaName).toMatch(/internal\.example resolves to an address it may not reach; /);
    expect(viaName).not.toMatch(/10\.0\.0\.5|private/);
    expect(await refused("https://[::ffff:0:a9fe:a9fe]/latest", strict)).toMatch(/^invalid_url: .*\(169\.254\.169\.254\) is a link-local/);
    expect(await refused("https://[64:ff9b:1::a00:5]/hook", strict)).toMatch(/^invalid_url: .*\(10\.0\.0\.5, read with a \/96 NAT64 prefix\) is a private/);
    expect(await refused("https://translated.example/hook", { ...strict, resolve: resolvingTo("::ffff:0:7f00:1") })).toMatch(/^invalid_url: .*translated\.example resolves to an address it may not reach; (?!.*127\.0\.0\.1)/);
    expect(await refused("https://hooks.example/hook", { ...strict, resolve: resolvingTo("93.184.216.34") })).toBe("allowed");
  });

  it("answers url_unreachable, with the common bare message, for a name that does not resolve; without mustResolve it passes", async () => {
    const notFound: HostResolver = () => Promise.reject(Object.assign(new Error("getaddrinfo ENOTFOUND gone.example"), { code: "ENOTFOUND" }));
    const outcome = async (url: string, policy: WebhookNetworkPolicy, mustResolve = true) => {
      try {
        await checkWebhookTarget(new URL(url), policy, "webhook_url", { mustResolve });
        return "allowed";
      } catch (err) {
        const e = err as { code: string; status: number; details: unknown; message: string };
        return { status: e.status, code: e.code, message: e.message, details: e.details };
      }
    };
    const unreachable = { status: 400, code: "url_unreachable", message: "webhook_url: cannot be reached from this server", details: { fields: [{ field: "webhook_url", message: "cannot be reached from this server" }] } };
    expect(await outcome("https://gone.example/hook", { ...strict, resolve: notFound })).toEqual(unreachable);
    // A resolver answering no address at all is the same.
    expect(await outcome("https://empty.example/hook", { ...strict, resolve: resolvingTo() })).toEqual(unreachable);
    expect(await outcome("https://gone.example/hook", { ...strict, resolve: notFound }, false)).toBe("allowed");
    // A name resolving into the service's networks is invalid_url either way.
    expect(await outcome("https://internal.example/hook", { ...strict, resolve: resolvingTo("10.0.0.5") }, false)).toMatchObject({ code: "invalid_url" });
  });
});
