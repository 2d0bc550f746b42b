/**
 * `npm run bench:webhooks`: how fast webhook delivery keeps up. The real service runs
 * in-process (real SQLite file, real HTTP over loopback); events are written through the
 * outbox at a steady rate, as changes write them, to webhooks on a local receiver. Reported:
 * deliveries per second, and the delay from an event's write to its first attempt reaching
 * the receiver (a separate process on this machine, so the same wall clock). A second scenario adds a webhook whose receiver
 * never answers, to show it does not hold the others back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { fork } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { integer, parseOptions, UsageError } from "../src/cli/args.js";
import { answerHelp } from "../src/cli/help.js";
import { loadConfig } from "../src/config.js";
import { startParley, type Parley } from "../src/main.js";
import { summarize, type Summary } from "./bench/percentiles.js";
import type { Arrival } from "./bench/webhook-receiver.js";

export const WEBHOOK_BENCH_USAGE = `npm run bench:webhooks -- [--rate N] [--seconds N] [--warmup N] [--webhooks N] [--json]

  --rate N       events written per second (default 200)
  --seconds N    how long events are written and measured, per scenario (default 10)
  --warmup N     seconds of events written first and left out of the figures (default 2)
  --webhooks N   webhooks subscribed to every event, on one local receiver (default 4)
  --json         print the result as JSON on stdout`;

/** Target the issue sets: p95 first-attempt delay under 100 ms at 200 events/s. */
const TARGET_P95_MS = 100;
/** How long to wait after the last write for the last deliveries. */
const DRAIN_WAIT_MS = 30_000;

/** A receiver process: its URL, and what it recorded on request. */
interface Receiver {
  url: string;
  count(): Promise<number>;
  arrivals(): Promise<Arrival[]>;
  close(): Promise<void>;
}

async function startReceiver(hang: boolean): Promise<Receiver> {
  const child = fork(fileURLToPath(new URL("./bench/webhook-receiver.js", import.meta.url)), hang ? ["--hang"] : [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const ask = <T>(question: string, key: string) =>
    new Promise<T>((resolve) => {
      const listener = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        child.off("message", listener);
        resolve(message[key] as T);
      };
      child.on("message", listener);
      child.send(question);
    });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m: { port: number }) => resolve(m.port));
    child.once("exit", (code) => reject(new Error(`receiver exited ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    count: () => ask<number>("count", "count"),
    arrivals: () => ask<Arrival[]>("report", "arrivals"),
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill();
      }),
  };
}

export interface ScenarioResult {
  name: string;
  events_written: number;
  /** Events written per second, as achieved. */
  write_rate: number;
  deliveries_expected: number;
  deliveries_received: number;
  /** Deliveries received per second, from the first write to the last arrival. */
  deliveries_per_second: number;
  /** From the last write to the last arrival. */
  drain_ms: number;
  /** Event write to first attempt arriving at the receiver. */
  first_attempt_delay_ms: Summary;
  target_met: boolean;
}

async function runScenario(options: { name: string; rate: number; seconds: number; warmup: number; webhooks: number; hangingWebhook: boolean; json: boolean }): Promise<ScenarioResult> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-webhook-bench-"));
  const config = loadConfig({
    // Delivery settings (PARLEY_WEBHOOK_CONCURRENCY, ...) may be tried from the environment.
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("PARLEY_WEBHOOK_"))), PARLEY_ENGINE: "0", PARLEY_SIP_PORT: "0", PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1", PARLEY_WEBHOOK_VERIFY_URL: "0" },
    cwd: dataDir,
    overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent" },
  });
  const receiver = await startReceiver(false);
  const stuck = await startReceiver(true);
  let parley: Parley | undefined;
  try {
    parley = await startParley(config, pino({ level: "silent" }));
    const { services } = parley;
    const account = await services.accounts.create({ name: "Bench", plan: "agency", credits: 0 });
    const key = (await services.apiKeys.create(account.id, "bench", ["*"])).key;
    const base = `http://127.0.0.1:${parley.http.port}`;
    const targets = [...Array.from({ length: options.webhooks }, () => receiver.url), ...(options.hangingWebhook ? [stuck.url] : [])];
    for (const url of targets) {
      const res = await fetch(`${base}/v1/webhooks`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url, events: ["*"] }) });
      if (res.status !== 201) throw new Error(`webhook not created: ${res.status} ${await res.text()}`);
    }

    const warmupEvents = Math.round(options.rate * options.warmup);
    const total = warmupEvents + Math.round(options.rate * options.seconds);
    const interval = 1000 / options.rate;
    const start = performance.now();
    const startWall = Date.now();
    let written = 0;
    let lastReport = start;
    while (written < total) {
      // Keep to the schedule: write every event whose time has come, then sleep to the next.
      const due = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
      for (; written < due; written++) {
        await services.db.transaction().execute((trx) => services.outbox.append([{ accountId: account.id, name: "agent.updated", data: { i: written, written_at: Date.now(), warmup: written < warmupEvents } }], trx));
      }
      const now = performance.now();
      if (now - lastReport >= 1000) {
        lastReport = now;
        process.stderr.write(`  ${options.name}: ${written} events written, ${await receiver.count()} deliveries received\n`);
      }
      const next = start + written * interval;
      if (next > now) await new Promise((resolve) => setTimeout(resolve, next - now));
    }
    const lastWrite = performance.now();
    const lastWriteWall = Date.now();
    const expected = written * options.webhooks;
    const drainEnd = lastWrite + DRAIN_WAIT_MS;
    while ((await receiver.count()) < expected && performance.now() < drainEnd) await new Promise((resolve) => setTimeout(resolve, 20));
    const arrivals = await receiver.arrivals();
    const lastArrival = Math.max(...arrivals.map((a) => a.at));
    const delays = summarize(arrivals.filter((a) => a.measured).map((a) => a.at - a.writtenAt));
    return {
      name: options.name,
      events_written: written,
      write_rate: Math.round((written / (lastWrite - start)) * 1000),
      deliveries_expected: expected,
      deliveries_received: arrivals.length,
      deliveries_per_second: Math.round((arrivals.length / (lastArrival - startWall)) * 1000),
      drain_ms: Math.round(Math.max(0, lastArrival - lastWriteWall)),
      first_attempt_delay_ms: delays,
      target_met: delays.p95 !== null && delays.p95 < TARGET_P95_MS,
    };
  } finally {
    // The stuck receiver's open attempts end when it closes; stopping waits for them.
    await stuck.close();
    await parley?.stop();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function report(results: ScenarioResult[], options: { rate: number; seconds: number; warmup: number; webhooks: number }): string {
  const row = (r: ScenarioResult) => {
    const d = r.first_attempt_delay_ms;
    return `| ${r.name} | ${r.events_written} at ${r.write_rate}/s | ${r.deliveries_received}/${r.deliveries_expected} | ${r.deliveries_per_second}/s | ${d.p50} | ${d.p95} | ${d.p99} | ${d.max} | ${r.drain_ms} | ${r.target_met ? "yes" : "NO"} |`;
  };
  return [
    `Webhook delivery: ${options.rate} events/s for ${options.seconds} s (after ${options.warmup} s of warm-up, left out) to ${options.webhooks} webhooks on one local receiver process (${os.cpus().length} cores)`,
    ``,
    `| scenario | events written | deliveries | delivered | delay p50 ms | p95 | p99 | max | drain ms | p95 < ${TARGET_P95_MS} ms |`,
    `|---|---|---|---|---|---|---|---|---|---|`,
    ...results.map(row),
    ``,
    `delay: from the event's write to its first attempt arriving at the receiver`,
  ].join("\n");
}

export async function webhookBench(argv: string[]): Promise<number> {
  const o = parseOptions(argv, { rate: { type: "string" }, seconds: { type: "string" }, warmup: { type: "string" }, webhooks: { type: "string" }, json: { type: "boolean" } });
  const options = {
    rate: integer(o.rate, "rate", 1) ?? 200,
    seconds: integer(o.seconds, "seconds", 1) ?? 10,
    warmup: integer(o.warmup, "warmup", 0) ?? 2,
    webhooks: integer(o.webhooks, "webhooks", 1) ?? 4,
    json: o.json === true,
  };
  if (options.rate > 5000) throw new UsageError("--rate must be at most 5000");
  const results = [
    await runScenario({ ...options, name: "healthy receivers", hangingWebhook: false }),
    await runScenario({ ...options, name: "plus one receiver that never answers", hangingWebhook: true }),
  ];
  const output = options.json ? JSON.stringify({ rate: options.rate, seconds: options.seconds, warmup: options.warmup, webhooks: options.webhooks, cores: os.cpus().length, target_p95_ms: TARGET_P95_MS, scenarios: results }, null, 2) : report(results, options);
  process.stdout.write(output + "\n");
  const lost = results.filter((r) => r.deliveries_received < r.deliveries_expected);
  for (const r of lost) process.stderr.write(`webhook bench: ${r.name}: ${r.deliveries_expected - r.deliveries_received} deliveries never arrived within ${DRAIN_WAIT_MS / 1000} s\n`);
  return lost.length > 0 ? 1 : 0;
}

answerHelp(process.argv.slice(2), WEBHOOK_BENCH_USAGE);
webhookBench(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(err instanceof UsageError ? `bench:webhooks: ${err.message}\n\n${WEBHOOK_BENCH_USAGE}\n` : `bench:webhooks: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
