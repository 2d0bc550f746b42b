import net from "node:net";
import tls from "node:tls";

export type ProbeResult = { reachable: true } | { reachable: false; reason: string };

/** Says whether a URL's host accepts connections; replaceable (tests, other network policies). */
export interface UrlReachabilityProbe {
  probe(url: URL): Promise<ProbeResult>;
}

export interface SocketProbeOptions {
  /** How long to wait for the connection (and, for https, the TLS handshake). */
  timeoutMs?: number;
  /** Host name resolver; the system's by default. */
  lookup?: net.LookupFunction;
}

const DEFAULT_TIMEOUT_MS = 5000;

function describeFailure(err: NodeJS.ErrnoException, where: string, host: string, secure: boolean): string {
  switch (err.code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_FAIL":
    case "EAI_NODATA":
      return `DNS lookup of ${host} failed (${err.code})`;
    case "ECONNREFUSED":
      return `connection to ${where} refused`;
    case "ECONNRESET":
      return `connection to ${where} reset`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} is unreachable from this server (${err.code})`;
    default:
      // Certificate and handshake errors land here too, with their own message.
      return `${secure ? "TLS connection" : "connection"} to ${where} failed: ${err.message}`;
  }
}

/**
 * Opens a TCP connection to the URL's host and port (a TLS connection, certificate checked,
 * for https) and closes it at once: no HTTP request is sent.
 */
export class SocketProbe implements UrlReachabilityProbe {
  private readonly timeoutMs: number;
  private readonly lookup: net.LookupFunction | undefined;

  constructor(options: SocketProbeOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.lookup = options.lookup;
  }

  probe(url: URL): Promise<ProbeResult> {
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const secure = url.protocol === "https:";
    const port = Number(url.port) || (secure ? 443 : 80);
    const where = `${url.hostname}:${port}`;
    const lookup = this.lookup ? { lookup: this.lookup } : {};
    return new Promise((resolve) => {
      const socket = secure
        ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...lookup })
        : net.connect({ host, port, ...lookup });
      const finish = (result: ProbeResult) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(result);
      };
      const timer = setTimeout(
        () => finish({ reachable: false, reason: `no connection to ${where} within ${this.timeoutMs / 1000} s (timed out)` }),
        this.timeoutMs,
      );
      socket.once(secure ? "secureConnect" : "connect", () => finish({ reachable: true }));
      socket.once("error", (err: NodeJS.ErrnoException) => finish({ reachable: false, reason: describeFailure(err, where, host, secure) }));
    });
  }
}
