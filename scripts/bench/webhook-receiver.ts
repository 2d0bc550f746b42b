/**
 * The webhook benchmark's receiver, in its own process as a real receiver would be (it must not
 * take the service's CPU): answers 200 at once (or never, with `--hang`) and records, per
 * delivery, when it arrived and when its event was written (both wall-clock milliseconds).
 * It tells its parent its port, and sends what it recorded when asked ("report").
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Arrival {
  delivery: string;
  /** Date.now() when the request arrived. */
  at: number;
  /** The event's `data.written_at` (Date.now() when it was written). */
  writtenAt: number;
  /** False for the warm-up's events (`data.warmup`), which the figures leave out. */
  measured: boolean;
}

const hang = process.argv.includes("--hang");
const arrivals = new Map<string, Arrival>();

const server = http.createServer((req, res) => {
  const at = Date.now();
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    if (hang) return;
    const delivery = String(req.headers["x-parley-delivery"]);
    if (!arrivals.has(delivery)) {
      const { data } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { written_at: number; warmup: boolean } };
      arrivals.set(delivery, { delivery, at, writtenAt: data.written_at, measured: !data.warmup });
    }
    res.writeHead(200).end();
  });
});

server.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on("message", (message) => {
  if (message === "count") process.send!({ count: arrivals.size });
  if (message === "report") process.send!({ arrivals: [...arrivals.values()] });
});
process.on("disconnect", () => process.exit(0));
