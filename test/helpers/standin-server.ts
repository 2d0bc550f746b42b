import http from "node:http";
import type { AddressInfo } from "node:net";

/** Maps `https://host/x` to `http://127.0.0.1:port/x` and `wss://host/x` to `ws://127.0.0.1:port/x`, for a stand-in's `rewrite`. */
export function loopbackRewrite(localHttpBase: string): (url: string) => string {
  const local = new URL(localHttpBase);
  return (url) => {
    const u = new URL(url);
    const ws = u.protocol === "wss:" || u.protocol === "ws:";
    return `${ws ? "ws" : "http"}://${local.host}${u.pathname}${u.search}`;
  };
}

/** Throws unless `url` is on loopback: stand-ins never reach anything else, not even to be refused. */
export function assertLoopback(url: string, who: string): void {
  const { hostname } = new URL(url);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(hostname)) throw new Error(`the ${who} stand-in only connects to loopback; ${url} is not (pass a rewrite)`);
}

/**
 * What the carriers' stand-ins (Twilio, Telnyx, Vonage) share: an HTTP server on 127.0.0.1 with a
 * random port serving the carrier's REST API (`serve`, with the request's whole body), the calls
 * it knows by id, failures to answer on demand, and background work (webhooks, streams opened
 * or ended after an answer) that `idle()` waits for and `close()` finishes first.
 */
export abstract class StandInServer<Call extends { stream?: { close(): void } | undefined }> {
  readonly calls = new Map<string, Call>();
  /** The carrier's name, in messages. */
  protected abstract readonly carrier: string;
  protected base = "";
  /** Statuses the next REST requests are answered with (after authentication), in order. */
  protected readonly failures: number[] = [];
  private server: http.Server | undefined;
  private readonly background = new Set<Promise<unknown>>();

  /** Answers one REST request; `text` is its whole body. */
  protected abstract serve(req: http.IncomingMessage, text: string, res: http.ServerResponse): void;

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    if (!this.base) throw new Error(`the ${this.carrier} stand-in is not started`);
    return this.base;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.serve(req, Buffer.concat(chunks).toString("utf8"), res));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await this.idle();
    for (const call of this.calls.values()) call.stream?.close();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Resolves once the work started by requests and commands (webhooks, streams opened or ended) is done. */
  async idle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /** The next `count` REST requests (after authentication) are answered `status` with the carrier's error body. */
  failNext(count: number, status = 500): void {
    for (let i = 0; i < count; i++) this.failures.push(status);
  }

  call(id: string): Call {
    const call = this.calls.get(id);
    if (!call) throw new Error(`no call ${id} at the ${this.carrier} stand-in`);
    return call;
  }

  protected inBackground(work: () => Promise<unknown>): void {
    const p: Promise<unknown> = work()
      .catch(() => undefined)
      .finally(() => this.background.delete(p));
    this.background.add(p);
  }
}
