import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { MediaEndpoint } from "./media-endpoint.js";

/**
 * A MediaEndpoint over its own WebSocket server that shares the HTTP server (the gateway hands
 * it upgrades): messages past `maxMessageBytes` close the socket (1009), and close() drops
 * every socket it accepted.
 */
export abstract class SocketServerEndpoint implements MediaEndpoint {
  abstract readonly path: string;
  protected readonly wss: WebSocketServer;

  constructor(maxMessageBytes: number) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  }

  abstract upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, clientAddress: string): void;

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }
}
