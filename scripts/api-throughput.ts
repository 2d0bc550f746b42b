/**
 * `npm run bench:api`: how many requests per second the REST API serves on its list and read
 * endpoints, next to a bare Express app answering the same bodies on the same box. Parley runs
 * as `parley serve` in its own process with its production settings (request logging on, at
 * level info, to a log file); the bare app runs in another process; autocannon (in this one)
 * loads each in turn with the same connections, headers and paths. The ratio of the two,
 * measured in the same run, is the figure that survives a busy machine.
 */
import { fork } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import SQLite from "better-sqlite3";
import { integer, parseOptions, UsageError } from "../src/cli/args.js";
import { answerHelp } from "../src/cli/help.js";
import { isPostgresUrl, loadConfig } from "../src/config.js";
import { DATABASE_FILE_NAME } from "../src/db/database.js";
import { randomBase62 } from "../src/core/ids.js";
import { openMigratedDatabase } from "../src/main.js";
import { summarize } from "./bench/percentiles.js";
import { processTreeUsage } from "./bench/process-tree-usage.js";
import { runCliJson, startServer, type ServerProcess } from "./parley-process.js";
import { openPostgres } from "../src/db/postgres.js";

export const API_THROUGHPUT_USAGE = `npm run bench:api -- [--duration S] [--warmup S] [--connections N] [--only NAME,...] [--json] [--no-fail] [--cpu-prof DIR] [--write-load] [--database-url URL]

  --duration S     seconds measured per endpoint and server, in 2 s turns (default 10)
  --warmup S       seconds of load on each endpoint and server before any measurement (default 2)
  --connections N  concurrent connections (default 10)
  --only NAMES     endpoints to run, comma-separated (default all: list-agents,read-agent,list-calls,read-call,list-numbers)
  --json           print the result as JSON on stdout
  --no-fail        exit 0 even when a target is missed
  --cpu-prof DIR   run Parley with node --cpu-prof, writing its profile to DIR
  --write-load     while measuring, write to Parley's database every 50 ms from another connection, as a live call's heartbeat does
  --database-url URL  an empty PostgreSQL database to run Parley on (postgres://...; default: SQLite in a temporary data directory)`;

/** Targets the issue sets: at least this share of the bare app's requests/s, and this p99. */
const TARGET_RATIO = 0.4;
const TARGET_P99_MS = 10;
const AGENTS = 20;
const CALLS = 60;
const NUMBERS = 10;
/** Above anything the benchmark can reach: the account's plan limit would answer 429 within a second. */
const BENCH_REQUESTS_PER_MINUTE = 1_000_000_000;
/** The servers take turns in slices this long (seconds). */
const SLICE_SECONDS = 2;
/** With --write-load: one write this often (ms), a live call's heartbeat. */
const WRITE_INTERVAL_MS = 50;

export interface Measurement {
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  /** The server process's CPU time per request: what the machine's other load changes least (Linux only). */
  cpu_us_per_request: number | null;
  /** Responses that were not 2xx, and connection errors or timeouts: any makes the run invalid. */
  non_2xx: number;
  errors: number;
}

export interface EndpointResult {
  name: string;
  path: string;
  parley: Measurement;
  express: Measurement;
  ratio: number;
  /** Bare Express's CPU per request over Parley's: the ratio a machine with cores to spare would give. */
  cpu_ratio: number | null;
  ratio_met: boolean;
  p99_met: boolean;
}

interface Endpoint {
  name: string;
  path: string;
}

/** Latencies (ms) and counts of one or more load slices on one server. */
class Samples {
  latencies: number[] = [];
  seconds = 0;
  /** CPU time the server process spent in the slices (Linux; null elsewhere). */
  cpuMs: number | null = 0;
  non2xx = 0;
  errors = 0;

  summary(): Measurement {
    const l = summarize(this.latencies);
    return {
      requests_per_second: Math.round(this.latencies.length / this.seconds),
      p50_ms: l.p50 ?? 0,
      p99_ms: l.p99 ?? 0,
      requests: this.latencies.length,
      cpu_us_per_request: this.cpuMs === null || this.latencies.length === 0 ? null : Math.round((this.cpuMs * 1000) / this.latencies.length),
      non_2xx: this.non2xx,
      errors: this.errors,
    };
  }
}

/** Loads `url` for `seconds`; with `into`, records every 2xx response's latency there, and the CPU time of process `pid`. */
function load(url: string, seconds: number, connections: number, headers: Record<string, string>, into?: Samples, pid?: number): Promise<void> {
  const cpuBefore = pid === undefined ? null : processTreeUsage(pid)?.cpuMs;
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections, duration: seconds, headers }, (err, r) => {
      if (err) return reject(err);
      if (into) {
        const cpuAfter = pid === undefined ? null : processTreeUsage(pid)?.cpuMs;
        into.cpuMs = into.cpuMs === null || cpuBefore == null || cpuAfter == null ? null : into.cpuMs + cpuAfter - cpuBefore;
        into.seconds += seconds;
        into.non2xx += r.non2xx;
        into.errors += r.errors + r.timeouts;
      }
      resolve();
    });
    if (into) instance.on("response", (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) into.latencies.push(ms);
    });
  });
}

/** A bare Express app in its own process answering each path with its body. */
async function startBareExpress(routes: Array<{ path: string; body: unknown }>) {
  const child = fork(fileURLToPath(new URL("./bench/bare-express.js", import.meta.url)), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m: { port: number }) => resolve(m.port));
    child.once("exit", (code) => reject(new Error(`bare Express app exited ${code}`)));
    child.send({ routes });
  });
  return {
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill();
      }),
  };
}

/** Ended calls as the telephony layer leaves them, written beside the running service (SQLite WAL). */
async function seedCalls(env: NodeJS.ProcessEnv, dataDir: string, accountId: string, agentIds: string[]): Promise<void> {
  const db = await openMigratedDatabase(loadConfig({ env, cwd: dataDir, overrides: { dataDir } }));
  try {
    const start = Date.parse("2026-01-01T09:00:00.000Z");
    for (let i = 0; i < CALLS; i++) {
      const created = new Date(start + i * 600_000);
      const at = (s: number) => new Date(created.getTime() + s * 1000).toISOString();
      await db
        .insertInto("calls")
        .values({
          id: "call_" + randomBase62(20),
          account_id: accountId,
          agent_id: agentIds[i % agentIds.length]!,
          campaign_id: null,
          contact_id: null,
          direction: "outbound",
          status: "completed",
          phone_number: `+1415555${String(1000 + i).padStart(4, "0")}`,
          from_number: "+16505550100",
          metadata: JSON.stringify({ customer_id: `cus_${i}`, source: "bench" }),
          context: JSON.stringify({ first_name: "Sam" }),
          record: 0,
          max_duration: 600,
          webhook_url: null,
          duration: 42,
          transcript: JSON.stringify([
            { role: "agent", content: "Hello, this is the clinic calling about your appointment.", timestamp: 0.4 },
            { role: "user", content: "Hi, can we move it to Thursday?", timestamp: 3.1 },
          ]),
          recording_path: null,
          analysis: null,
          outcome: null,
          actions: null,
          end_reason: "agent_hangup",
          transfer_number: null,
          failure_reason: null,
          latency: null,
          analysis_pending: 0,
          appointment_id: null,
          billed_credits: 1,
          created_at: created.toISOString(),
          answered_at: at(5),
          ended_at: at(47),
          updated_at: at(47),
        })
        .execute();
    }
  } finally {
    await db.destroy();
  }
}

/**
 * A call in progress (created before the seeded ones, so it is on no measured page): what the
 * write load's heartbeats update.
 */
async function seedLiveCall(env: NodeJS.ProcessEnv, dataDir: string, accountId: string, agentId: string): Promise<string> {
  const db = await openMigratedDatabase(loadConfig({ env, cwd: dataDir, overrides: { dataDir } }));
  const id = "call_" + randomBase62(20);
  try {
    const created = "2025-12-31T09:00:00.000Z";
    await db
      .insertInto("calls")
      .values({
        id, account_id: accountId, agent_id: agentId, campaign_id: null, contact_id: null, direction: "outbound", status: "in_progress",
        phone_number: "+14155559999", from_number: "+16505550100", metadata: "{}", context: "{}", record: 0, max_duration: 600,
        webhook_url: null, duration: null, transcript: "[]", recording_path: null, analysis: null, outcome: null, actions: null,
        end_reason: null, transfer_number: null, failure_reason: null, latency: null, analysis_pending: 0, appointment_id: null,
        billed_credits: 0, created_at: created, answered_at: created, ended_at: null, updated_at: created,
      })
      .execute();
  } finally {
    await db.destroy();
  }
  return id;
}

/**
 * --write-load: every WRITE_INTERVAL_MS, the live call's `updated_at` and transcript so far are
 * written, as the media gateway's heartbeat does during a call, from a connection of this
 * process (the service sees another connection's commit, as it sees the admin CLI's). Any
 * write makes the service read its API keys afresh at the next request.
 */
function heartbeatWriter(database: { file: string } | { url: string }, callId: string) {
  let touch: (at: string, transcript: string) => void;
  let close: () => void;
  if ("url" in database) {
    const pg = openPostgres(database.url, { poolSize: 1 });
    touch = (at, text) => void pg.updateTable("calls").set({ updated_at: at, transcript: text }).where("id", "=", callId).execute();
    close = () => void pg.destroy();
  } else {
    const db = new SQLite(database.file);
    db.pragma("busy_timeout = 5000");
    const statement = db.prepare("UPDATE calls SET updated_at = ?, transcript = ? WHERE id = ?");
    touch = (at, text) => statement.run(at, text, callId);
    close = () => db.close();
  }
  const transcript: Array<{ role: string; content: string; timestamp: number }> = [];
  let writes = 0;
  const timer = setInterval(() => {
    transcript.push({ role: writes % 2 ? "user" : "agent", content: "Still there?", timestamp: writes * (WRITE_INTERVAL_MS / 1000) });
    if (transcript.length > 40) transcript.shift();
    touch(new Date().toISOString(), JSON.stringify(transcript));
    writes++;
  }, WRITE_INTERVAL_MS);
  let stopped = false;
  return {
    /** Stops writing; the number of writes made. */
    stop: (): number => {
      if (!stopped) {
        stopped = true;
        clearInterval(timer);
        close();
      }
      return writes;
    },
  };
}

async function api(base: string, key: string, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const ALL_ENDPOINTS = ["list-agents", "read-agent", "list-calls", "read-call", "list-numbers"] as const;

export interface Options {
  duration: number;
  warmup: number;
  connections: number;
  only: string[];
  json: boolean;
  fail: boolean;
  cpuProf: string | undefined;
  writeLoad: boolean;
  /** PostgreSQL to run Parley on; undefined: SQLite. */
  databaseUrl: string | undefined;
}

function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

export async function apiThroughput(options: Options): Promise<{ results: EndpointResult[]; logLines: number; accountLimit: number; writes: number }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-api-bench-"));
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "info", ...(options.databaseUrl ? { PARLEY_DATABASE_URL: options.databaseUrl } : {}) };
  const logFile = path.join(dataDir, "parley.log");
  const logFd = openSync(logFile, "a");
  let parley: ServerProcess | undefined;
  let bare: Awaited<ReturnType<typeof startBareExpress>> | undefined;
  let writer: ReturnType<typeof heartbeatWriter> | undefined;
  try {
    progress("creating an account and a key with the admin CLI, and lifting the account's rate limit");
    const account = await runCliJson(["admin", "account", "create", "--name", "Bench", "--plan", "pro", "--credits", "100"], env);
    const key: string = (await runCliJson(["admin", "key", "create", "--account", account.id, "--name", "bench"], env)).key;
    await runCliJson(["admin", "account", "limits", "--account", account.id, "--requests-per-minute", String(BENCH_REQUESTS_PER_MINUTE)], env);

    progress("starting parley serve (log level info: one log line per request)");
    parley = await startServer(env, { stdoutFd: logFd, nodeArgs: options.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProf}`] : [] });
    const base = parley.baseUrl;
    const agentIds: string[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const agent = await api(base, key, "POST", "/v1/agents", {
        name: `Agent ${i + 1}`,
        system_prompt: "You call patients to confirm their appointments. Be brief and friendly; offer another slot when they cannot come.",
        voice_id: "flite-slt",
        first_message: "Hello, this is the clinic calling about your appointment.",
        metadata: { team: "front desk", index: i },
      });
      agentIds.push(agent.id);
    }
    for (let i = 0; i < NUMBERS; i++) await api(base, key, "POST", "/v1/phone-numbers", { phone_number: `+1650555${String(3000 + i)}`, country: "US" });
    await seedCalls(env, dataDir, account.id, agentIds);
    const liveCall = await seedLiveCall(env, dataDir, account.id, agentIds[0]!);
    const someCall = (await api(base, key, "GET", "/v1/calls?limit=1")).data[0].id as string;

    const paths: Record<(typeof ALL_ENDPOINTS)[number], string> = {
      "list-agents": "/v1/agents?limit=20",
      "read-agent": `/v1/agents/${agentIds[0]}`,
      "list-calls": "/v1/calls?limit=20",
      "read-call": `/v1/calls/${someCall}`,
      "list-numbers": "/v1/phone-numbers",
    };
    const endpoints: Endpoint[] = options.only.map((name) => ({ name, path: paths[name as keyof typeof paths] }));
    const routes = [];
    for (const e of endpoints) routes.push({ path: e.path.split("?")[0]!, body: await api(base, key, "GET", e.path) });
    bare = await startBareExpress(routes);

    const headers = { authorization: `Bearer ${key}` };
    const results: EndpointResult[] = [];
    if (options.writeLoad) {
      writer = heartbeatWriter(options.databaseUrl ? { url: options.databaseUrl } : { file: path.join(dataDir, DATABASE_FILE_NAME) }, liveCall);
      progress(`write load: the live call's heartbeat written to the database every ${WRITE_INTERVAL_MS} ms from another connection`);
    }
    // The two servers take turns in slices of SLICE_SECONDS, so a change in the machine's other
    // load during the run weighs on both alike.
    const slices = Math.max(1, Math.round(options.duration / SLICE_SECONDS));
    const sliceSeconds = options.duration / slices;
    // Every endpoint is warmed on both servers before anything is measured: the first
    // endpoint measured would otherwise run on code the JIT has not optimised yet.
    if (options.warmup > 0) {
      progress(`warming up: ${options.warmup} s per endpoint on each server`);
      for (const e of endpoints) for (const url of [base + e.path, bare.baseUrl + e.path]) await load(url, options.warmup, options.connections, headers);
    }
    for (const e of endpoints) {
      const servers = [
        { label: "parley", url: base + e.path, pid: parley.child.pid!, samples: new Samples() },
        { label: "bare express", url: bare.baseUrl + e.path, pid: bare.pid, samples: new Samples() },
      ];
      for (let i = 0; i < slices; i++) {
        for (const s of servers) await load(s.url, sliceSeconds, options.connections, headers, s.samples, s.pid);
        progress(`${e.name}: ${Math.round((i + 1) * sliceSeconds)} of ${options.duration} s measured on each (parley ${Math.round(servers[0]!.samples.latencies.length / servers[0]!.samples.seconds)} req/s, bare express ${Math.round(servers[1]!.samples.latencies.length / servers[1]!.samples.seconds)} req/s)`);
      }
      const [p, x] = servers.map((s) => {
        const m = s.samples.summary();
        if (m.non_2xx > 0 || m.errors > 0) throw new Error(`${s.label} ${e.path}: ${m.non_2xx} non-2xx responses and ${m.errors} errors in the measurement`);
        return m;
      }) as [Measurement, Measurement];
      const ratio = Math.round((p.requests_per_second / x.requests_per_second) * 100) / 100;
      const cpuRatio = p.cpu_us_per_request && x.cpu_us_per_request ? Math.round((x.cpu_us_per_request / p.cpu_us_per_request) * 100) / 100 : null;
      results.push({ name: e.name, path: e.path, parley: p, express: x, ratio, cpu_ratio: cpuRatio, ratio_met: ratio >= TARGET_RATIO, p99_met: p.p99_ms < TARGET_P99_MS });
    }
    const writes = writer?.stop() ?? 0;
    writer = undefined;
    // The service stops (and flushes its log) before the request lines are counted.
    await bare.stop();
    bare = undefined;
    await parley.stop();
    parley = undefined;
    const logLines = readFileSync(logFile, "utf8").split("\n").filter((l) => l.includes('"msg":"request"')).length;
    return { results, logLines, accountLimit: BENCH_REQUESTS_PER_MINUTE, writes };
  } finally {
    writer?.stop();
    await bare?.stop();
    await parley?.stop();
    closeSync(logFd);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function report(results: EndpointResult[], options: Options, logLines: number, accountLimit: number, writes: number): string {
  const row = (r: EndpointResult) =>
    `| ${r.name} | \`${r.path.replace(/_[A-Za-z0-9]{20}\b/, "_…")}\` | ${r.parley.requests_per_second} | ${r.parley.p50_ms} | ${r.parley.p99_ms} | ${r.express.requests_per_second} | ${r.express.p99_ms} | ${r.ratio.toFixed(2)} | ${r.parley.cpu_us_per_request ?? "-"} | ${r.express.cpu_us_per_request ?? "-"} | ${r.cpu_ratio?.toFixed(2) ?? "-"} | ${r.ratio_met && r.p99_met ? "pass" : `FAIL${r.ratio_met ? "" : ` (ratio < ${TARGET_RATIO})`}${r.p99_met ? "" : ` (p99 >= ${TARGET_P99_MS} ms)`}`} |`;
  return [
    `API throughput: ${options.connections} connections, ${options.duration} s measured per endpoint and server after ${options.warmup} s of warm-up on each, the two taking turns every ${SLICE_SECONDS} s (${os.cpus().length} cores)`,
    `Parley: parley serve, log level info (${logLines} request log lines written), the account's rate limit lifted to ${accountLimit}/min with \`parley admin account limits --requests-per-minute\``,
    `Bare Express: another process, each path answered with res.json(the body Parley answered)`,
    `Database: ${options.databaseUrl ? "PostgreSQL (--database-url)" : "SQLite in the data directory"}`,
    ...(options.writeLoad ? [`Write load: a live call's heartbeat written to Parley's database every ${WRITE_INTERVAL_MS} ms from another connection (${writes} writes)`] : []),
    ``,
    `| endpoint | path | Parley req/s | p50 ms | p99 ms | Express req/s | Express p99 ms | ratio | Parley CPU µs/req | Express CPU µs/req | CPU ratio | target: ratio >= ${TARGET_RATIO}, p99 < ${TARGET_P99_MS} ms |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|`,
    ...results.map(row),
    ``,
    `ratio: Parley's req/s over bare Express's, measured in the same run. CPU µs/req: each server process's CPU time per request;`,
    `CPU ratio: Express's over Parley's, the ratio a machine with idle cores would show (autocannon and other load share these cores).`,
  ].join("\n");
}

export function parseApiThroughputOptions(argv: string[]): Options {
  const o = parseOptions(argv, {
    duration: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string" },
    only: { type: "string" },
    json: { type: "boolean" },
    "no-fail": { type: "boolean" },
    "cpu-prof": { type: "string" },
    "write-load": { type: "boolean" },
    "database-url": { type: "string" },
  });
  if (o["database-url"] !== undefined && !isPostgresUrl(o["database-url"])) throw new UsageError("--database-url: a PostgreSQL URL such as postgres://user@127.0.0.1:5432/bench");
  const only = o.only ? o.only.split(",").map((n) => n.trim()) : [...ALL_ENDPOINTS];
  const unknown = only.filter((n) => !(ALL_ENDPOINTS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new UsageError(`--only: unknown endpoint ${unknown.join(", ")}; known: ${ALL_ENDPOINTS.join(", ")}`);
  return {
    duration: integer(o.duration, "duration", 1) ?? 10,
    warmup: integer(o.warmup, "warmup", 0) ?? 2,
    connections: integer(o.connections, "connections", 1) ?? 10,
    only,
    json: o.json === true,
    fail: o["no-fail"] !== true,
    cpuProf: o["cpu-prof"] ? path.resolve(o["cpu-prof"]) : undefined,
    writeLoad: o["write-load"] === true,
    databaseUrl: o["database-url"],
  };
}

async function main(argv: string[]): Promise<number> {
  const options = parseApiThroughputOptions(argv);
  const { results, logLines, accountLimit, writes } = await apiThroughput(options);
  const output = options.json
    ? JSON.stringify({ connections: options.connections, duration: options.duration, warmup: options.warmup, cores: os.cpus().length, target_ratio: TARGET_RATIO, target_p99_ms: TARGET_P99_MS, request_log_lines: logLines, account_requests_per_minute: accountLimit, write_load: options.writeLoad ? { interval_ms: WRITE_INTERVAL_MS, writes } : null, endpoints: results }, null, 2)
    : report(results, options, logLines, accountLimit, writes);
  process.stdout.write(output + "\n");
  const missed = results.filter((r) => !r.ratio_met || !r.p99_met);
  if (missed.length > 0) process.stderr.write(`bench:api: target missed on ${missed.map((r) => r.name).join(", ")}${options.fail ? "" : " (--no-fail: exit 0)"}\n`);
  return missed.length > 0 && options.fail ? 1 : 0;
}

answerHelp(process.argv.slice(2), API_THROUGHPUT_USAGE);
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(err instanceof UsageError ? `bench:api: ${err.message}\n\n${API_THROUGHPUT_USAGE}\n` : `bench:api: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
