import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runCliJson, startServer } from "../parley-process.js";

/** A `parley serve` child process with its own data directory, account and key. */
export interface BenchServer {
  baseUrl: string;
  key: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the service as a separate process, so its CPU and memory are measured apart from
 * the benchmark client's. `maxCalls` sizes the call capacity and the concurrent-call limit;
 * `providerEnv` points the engine at other providers (the cloud stand-ins).
 */
export async function startBenchServer(maxCalls: number, providerEnv: NodeJS.ProcessEnv = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_HOST: "127.0.0.1",
    PARLEY_PORT: "0",
    PARLEY_LOG_LEVEL: "warn",
    PARLEY_ENGINE: "1",
    // The benchmark measures what the box carries: admission must not stop it first. Recognizers keep their default.
    PARLEY_CALL_CAPACITY: String(Math.max(4, maxCalls)),
    PARLEY_PLAN_AGENCY_CONCURRENT_CALLS: String(Math.max(50, maxCalls)),
    // The benchmark client is one address that opens up to `maxCalls` calls at once, level after level.
    PARLEY_MEDIA_UPGRADES_PER_MINUTE: "1000000",
    PARLEY_MEDIA_PENDING_STREAMS: String(Math.max(100, maxCalls)),
    PARLEY_MEDIA_PENDING_STREAMS_PER_ADDRESS: String(Math.max(20, maxCalls)),
    ...providerEnv,
  };
  const account = await runCliJson<{ id: string }>(["admin", "account", "create", "--name", "bench", "--plan", "agency", "--credits", "100000"], env);
  const key = await runCliJson<{ key: string }>(["admin", "key", "create", "--account", account.id, "--name", "bench"], env);
  const server = await startServer(env);
  return {
    baseUrl: server.baseUrl,
    key: key.key,
    pid: server.child.pid!,
    stop: async () => {
      await server.stop("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
