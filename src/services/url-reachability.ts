import net from "node:net";
import tls from "node:tls";
import { guardedLookup, literalRefusal, type WebhookNetworkPolicy } from "./webhook-network-policy.js";

/** Says whether a URL's host accepts connections; replaceable (tests, other network policies). */
export interface UrlReachabilityProbe {
  probe(url: URL): Promise<boolean>;
}

export interface SocketProbeOptions {
  /** Which addresses may be tried at all: a refused one is never connected to. */
  policy: WebhookNetworkPolicy;
  /** How long to wait for the connection (and, for https, the TLS handshake). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5000;

/**
 * Opens a TCP connection to the URL's host and port (a TLS connection, certificate checked,
 * for https) and closes it at once: no HTTP request is sent. Addresses the network policy
 * refuses are never connected to. The answer is a bare yes or no: telling a refused port from
 * a timeout or a certificate's names would let a caller map networks through it.
 */
export class SocketProbe implements UrlReachabilityProbe {
  private readonly timeoutMs: number;
  private readonly lookup: net.LookupFunction;

  constructor(private readonly options: SocketProbeOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.lookup = guardedLookup(options.policy);
  }

  probe(url: URL): Promise<boolean> {
    if (literalRefusal(url, this.options.policy)) return Promise.resolve(false);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const secure = url.protocol === "https:";
    const port = Number(url.port) || (secure ? 443 : 80);
    return new Promise((resolve) => {
      const socket = secure
        ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), lookup: this.lookup })
        : net.connect({ host, port, lookup: this.lookup });
      const finish = (reachable: boolean) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(reachable);
      };
      const timer = setTimeout(() => finish(false), this.timeoutMs);
      socket.once(secure ? "secureConnect" : "connect", () => finish(true));
      socket.once("error", () => finish(false));
    });
  }
}
