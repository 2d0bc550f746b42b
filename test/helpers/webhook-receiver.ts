import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request as it reached the receiver. */
export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  /** Delivery id (X-Parley-Delivery). */
  delivery: string;
  /** Event name (X-Parley-Event). */
  event: string;
  receivedAt: number;
}

/** What the receiver answers to one request; `hang` never answers. */
export type ReceiverAnswer = { status: number; headers?: Record<string, string>; body?: string } | "hang";

/** A responder's answer, or a promise of it: the request stays open until it settles. */
type Answering = ReceiverAnswer | Promise<ReceiverAnswer>;

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Requests answered or still open. */
  open: number;
  /** Sets what the next requests get (by default 200 "ok"). */
  answer(responder: (request: ReceivedWebhook, index: number) => Answering): void;
  /** Resolves once `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every delivery and answers as told. */
export async function startWebhookReceiver(path = "/hooks"): Promise<WebhookReceiver> {
  let responder: (request: ReceivedWebhook, index: number) => Answering = () => ({ status: 200, body: "ok" });
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let body: unknown = rawBody;
      try {
        body = JSON.parse(rawBody);
      } catch {
        // not JSON: kept as text
      }
      const request: ReceivedWebhook = {
        headers: req.headers,
        rawBody,
        body,
        delivery: String(req.headers["x-parley-delivery"] ?? ""),
        event: String(req.headers["x-parley-event"] ?? ""),
        receivedAt: Date.now(),
      };
      receiver.received.push(request);
      for (const w of [...waiters]) if (receiver.received.length >= w.count) w.resolve();
      const reply = (answer: ReceiverAnswer) => {
        if (answer === "hang" || res.destroyed) return;
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? "");
      };
      const answer = responder(request, receiver.received.length - 1);
      if (answer instanceof Promise) void answer.then(reply);
      else reply(answer);
    });
  });
  server.on("request", (_req, res) => {
    receiver.open++;
    res.on("close", () => receiver.open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}${path}`,
    received: [],
    open: 0,
    answer(next) {
      responder = next;
    },
    waitFor(count, timeoutMs = 15_000) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${receiver.received.length} of ${count} deliveries in ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received);
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/**
 * A receiver's check of `X-Parley-Signature`, written as docs/webhooks.md tells receivers to:
 * the digest over `<t>.<raw body>` compared in constant time, the timestamp at most 300 s old.
 */
export function verifyParleySignature(header: string | undefined, rawBody: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const parts = Object.fromEntries((header ?? "").split(",").map((p) => p.split("=", 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(parts.v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
