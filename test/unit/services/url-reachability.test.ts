import { describe, expect, it } from "vitest";
import { SocketProbe } from "../../../src/services/url-reachability.js";
import type { HostResolver, WebhookNetworkPolicy } from "../../../src/services/webhook-network-policy.js";
import { closedLoopbackPort, startLoopbackHttpServer, startSilentTcpServer } from "../../helpers/loopback-peers.js";

const loopbackAllowed: WebhookNetworkPolicy = { allowLoopback: true, allowNetworks: [] };
const loopbackRefused: WebhookNetworkPolicy = { allowLoopback: false, allowNetworks: [] };
const resolvingTo = (address: string): HostResolver => async () => [{ address, family: address.includes(":") ? 6 : 4 }];

describe("SocketProbe", () => {
  it("reaches a listening port it may reach, without sending a request", async () => {
    const server = await startLoopbackHttpServer();
    try {
      expect(await new SocketProbe({ policy: loopbackAllowed }).probe(new URL(server.url))).toBe(true);
      expect(server.requests).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("answers a bare no, the same for a refused port, a TLS handshake that never ends and a port that does not speak TLS", async () => {
    const port = await closedLoopbackPort();
    const silent = await startSilentTcpServer();
    const plain = await startLoopbackHttpServer();
    try {
      const probe = new SocketProbe({ policy: loopbackAllowed, timeoutMs: 100 });
      expect(await probe.probe(new URL(`http://127.0.0.1:${port}/`))).toBe(false);
      expect(await probe.probe(new URL(`https://127.0.0.1:${silent.port}/`))).toBe(false);
      expect(await probe.probe(new URL(plain.url.replace("http:", "https:")))).toBe(false);
    } finally {
      await silent.close();
      await plain.close();
    }
  });

  it("never connects to an address the policy refuses, given as a literal or by a name that resolves to it", async () => {
    const server = await startLoopbackHttpServer();
    try {
      const port = new URL(server.url).port;
      expect(await new SocketProbe({ policy: loopbackRefused }).probe(new URL(server.url))).toBe(false);
      expect(await new SocketProbe({ policy: { ...loopbackRefused, resolve: resolvingTo("127.0.0.1") } }).probe(new URL(`http://receiver.example:${port}/`))).toBe(false);
      expect(await new SocketProbe({ policy: { ...loopbackRefused, resolve: resolvingTo("::ffff:127.0.0.1") } }).probe(new URL(`http://receiver.example:${port}/`))).toBe(false);
      expect(server.connections).toBe(0);
      // The same name, allowed: the connection goes to the address the resolver gave.
      expect(await new SocketProbe({ policy: { ...loopbackAllowed, resolve: resolvingTo("127.0.0.1") } }).probe(new URL(`http://receiver.example:${port}/`))).toBe(true);
      expect(server.connections).toBe(1);
    } finally {
      await server.close();
    }
  });
});
