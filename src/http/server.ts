import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bindFailure, StartupError } from "../core/startup-error.js";
import type { HttpApp } from "./app.js";

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting connections and waits for open requests to finish (idle ones are closed). */
  close(): Promise<void>;
}

export async function listen(app: HttpApp, port: number, host: string): Promise<RunningServer> {
  const server = createServer(app.messages, app.listener);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const refused = (err: Error) =>
      reject(new StartupError(`the API cannot listen on ${host}:${port} (TCP): ${bindFailure(err)}. Set PARLEY_PORT to a free port (or PARLEY_HOST to an address of this machine)`));
    server.once("error", refused);
    server.listen(port, host, () => {
      server.off("error", refused);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
