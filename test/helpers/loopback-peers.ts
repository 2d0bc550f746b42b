import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";

export interface LoopbackHttpServer {
  url: string;
  /** TCP connections accepted so far. */
  connections: number;
  /** HTTP requests received so far. */
  requests: number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that answers 200 and counts what reaches it. */
export async function startLoopbackHttpServer(): Promise<LoopbackHttpServer> {
  const server = http.createServer((_req, res) => {
    peer.requests++;
    res.end("ok");
  });
  server.on("connection", () => {
    peer.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const peer: LoopbackHttpServer = {
    url: `http://127.0.0.1:${port}/hooks/parley`,
    connections: 0,
    requests: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return peer;
}

/** A TCP server on 127.0.0.1 that accepts connections and never says a word (a TLS handshake hangs). */
export async function startSilentTcpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on: bound by the OS, then released. */
export async function closedLoopbackPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
