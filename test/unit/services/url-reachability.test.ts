import type { LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { SocketProbe } from "../../../src/services/url-reachability.js";
import { closedLoopbackPort, startLoopbackHttpServer, startSilentTcpServer } from "../../helpers/loopback-peers.js";

/** A resolver that fails like the system's does for an unknown name, without asking any DNS server. */
const unknownHost: LookupFunction = (hostname, _options, callback) => {
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 4);
};

describe("SocketProbe", () => {
  it("reaches a listening loopback port", async () => {
    const server = await startLoopbackHttpServer();
    try {
      expect(await new SocketProbe().probe(new URL(server.url))).toEqual({ reachable: true });
    } finally {
      await server.close();
    }
  });

  it("reports a refused connection", async () => {
    const port = await closedLoopbackPort();
    const result = await new SocketProbe().probe(new URL(`http://127.0.0.1:${port}/`));
    expect(result).toEqual({ reachable: false, reason: `connection to 127.0.0.1:${port} refused` });
  });

  it("reports a failed DNS lookup, for http and https", async () => {
    const probe = new SocketProbe({ lookup: unknownHost });
    for (const url of ["http://hooks.example.test/x", "https://hooks.example.test/x"]) {
      expect(await probe.probe(new URL(url))).toEqual({ reachable: false, reason: "DNS lookup of hooks.example.test failed (ENOTFOUND)" });
    }
  });

  it("gives up when the TLS handshake never completes", async () => {
    const silent = await startSilentTcpServer();
    try {
      const result = await new SocketProbe({ timeoutMs: 50 }).probe(new URL(`https://127.0.0.1:${silent.port}/`));
      expect(result).toEqual({ reachable: false, reason: `no connection to 127.0.0.1:${silent.port} within 0.05 s (timed out)` });
    } finally {
      await silent.close();
    }
  });

  it("reports a TLS failure when the port does not speak TLS", async () => {
    const plain = await startLoopbackHttpServer();
    try {
      const result = await new SocketProbe().probe(new URL(plain.url.replace("http:", "https:")));
      expect(result.reachable).toBe(false);
      expect(!result.reachable && result.reason).toMatch(/^TLS connection to 127\.0\.0\.1:\d+ failed: /);
    } finally {
      await plain.close();
    }
  });
});
