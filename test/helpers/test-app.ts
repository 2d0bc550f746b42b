import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino, type Logger } from "pino";
import { loadConfig, type Config } from "../../src/config.js";
import type { Plan } from "../../src/config.js";
import { databaseFile, startParley, type Parley } from "../../src/main.js";
import type { HostResolver } from "../../src/services/webhook-network-policy.js";
import type { ServiceOptions } from "../../src/services/container.js";
import { testPostgresDatabase } from "./postgres-global-setup.js";
import { openDatabase, type Db } from "../../src/db/database.js";
import { openPostgres } from "../../src/db/postgres.js";

export interface TestAccount {
  id: string;
  key: string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface TestApp {
  parley: Parley;
  baseUrl: string;
  dataDir: string;
  config: Config;
  /** A new account with a key holding `permissions` (default all). */
  account(options?: { plan?: Plan; credits?: number; permissions?: string[] }): Promise<TestAccount>;
  /** A further key for an existing account. */
  key(accountId: string, permissions?: string[]): Promise<string>;
  /** Approves a phone number as the operator does (`parley admin number approve`): it becomes active. */
  approveNumber(id: string): Promise<void>;
  /** Registers a number with `POST /v1/phone-numbers` and approves it: the active number object. */
  activeNumber(key: string, body: Record<string, unknown>): Promise<any>;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** A connection of its own to the app's database (as another process has): the test closes it. */
  openDatabase(): Db;
  /** Whether the app keeps its data in PostgreSQL (the postgres lane) rather than SQLite. */
  onPostgres: boolean;
  close(): Promise<void>;
}

/**
 * The real service in-process: a temp data directory with a real SQLite file, HTTP on a
 * loopback port chosen by the OS.
 */
/**
 * Every host name resolves to 127.0.0.1 in tests unless a test brings its own resolver: no
 * DNS query leaves the machine, and a delivery to a made-up name ends on loopback.
 */
export const loopbackResolver: HostResolver = async () => [{ address: "127.0.0.1", family: 4 }];

export interface TestAppOptions extends Pick<ServiceOptions, "hostResolver" | "clock"> {
  /**
   * Another running app whose database this one opens too, as nodes sharing one database do: its
   * PostgreSQL database, or its SQLite file (a symbolic link in this app's own data directory:
   * SQLite follows it, WAL and locks included). Close this app before that one: closing it
   * deletes the database.
   */
  shareDatabaseWith?: TestApp;
}

export async function startTestApp(
  overrides: Partial<Config> = {},
  env: NodeJS.ProcessEnv = {},
  logger: Logger = pino({ level: "silent" }),
  { shareDatabaseWith, ...options }: TestAppOptions = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-test-"));
  // The postgres lane runs each app on a database of its own (see postgres-global-setup.ts).
  // An app sharing another's database shares its PostgreSQL database there.
  const sharedUrl = shareDatabaseWith?.config.databaseUrl || undefined;
  const postgres = env.PARLEY_DATABASE_URL === undefined && !sharedUrl ? await testPostgresDatabase() : undefined;
  if (postgres || sharedUrl) env = { ...env, PARLEY_DATABASE_URL: postgres?.url ?? sharedUrl };
  const config = loadConfig({
    // API tests run without the media engine (no recognizers or TTS workers to load).
    // SIP stays off unless a test gives it a port (test files run in parallel: no fixed 5060).
    // Calls run on one session worker: the production path, with fewer threads competing with
    // the other test lane (several workers are tested in test/e2e/session-workers.test.ts).
    env: { PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1", PARLEY_ENGINE: "0", PARLEY_SIP_PORT: "0", PARLEY_SESSION_WORKERS: "1", ...env },
    cwd: dataDir,
    overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent", baseUrl: "http://127.0.0.1", ...overrides },
  });
  if (shareDatabaseWith && !sharedUrl) symlinkSync(databaseFile(shareDatabaseWith.config), databaseFile(config));
  const parley = await startParley(config, logger, { hostResolver: loopbackResolver, ...options });
  const baseUrl = `http://127.0.0.1:${parley.http.port}`;
  const { accounts, apiKeys } = parley.services;

  const key = async (accountId: string, permissions: string[] = ["*"]) => (await apiKeys.create(accountId, "test", permissions)).key;
  const approveNumber = async (id: string) => {
    await parley.services.phoneNumbers.approve(id);
  };
  const request: TestApp["request"] = async (method, urlPath, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | Uint8Array | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(baseUrl + urlPath, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };

  return {
    parley,
    baseUrl,
    dataDir,
    config,
    key,
    approveNumber,
    async activeNumber(numberKey, body) {
      const created = await request("POST", "/v1/phone-numbers", { key: numberKey, body });
      if (created.status !== 201) throw new Error(`phone number not created: ${created.status} ${JSON.stringify(created.body)}`);
      await approveNumber(created.body.id);
      return (await request("GET", `/v1/phone-numbers/${created.body.id}`, { key: numberKey })).body;
    },
    async account(options = {}) {
      const account = await accounts.create({ name: "Test account", plan: options.plan ?? "pro", credits: options.credits ?? 100 });
      return { id: account.id, key: await key(account.id, options.permissions) };
    },
    request,
    openDatabase: () => (config.databaseUrl ? openPostgres(config.databaseUrl) : openDatabase(databaseFile(config))),
    onPostgres: Boolean(config.databaseUrl),
    async close() {
      await parley.stop();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Asserts an error envelope and returns it, for compact checks in tests. */
export function errorOf(res: ApiResponse): { code: string; message: string; details?: any } {
  if (!res.body || typeof res.body !== "object" || !("error" in res.body)) {
    throw new Error(`expected an error envelope, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.error;
}
