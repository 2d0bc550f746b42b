import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI, next to this module in dist/. */
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.js");

/** A `parley serve` child process with its own data directory, account and key. */
export interface BenchServer {
  baseUrl: string;
  key: string;
  pid: number;
  stop(): Promise<void>;
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`parley ${args.join(" ")} exited ${code}: ${stderr}`))));
  });
}

/**
 * Starts the service as a separate process, so its CPU and memory are measured apart from
 * the benchmark client's. `maxCalls` sizes the recognizer pool and the concurrent-call limit.
 */
export async function startBenchServer(maxCalls: number): Promise<BenchServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_HOST: "127.0.0.1",
    PARLEY_PORT: "0",
    PARLEY_LOG_LEVEL: "warn",
    PARLEY_ENGINE: "1",
    PARLEY_ASR_RECOGNIZERS: String(Math.min(64, Math.max(4, maxCalls))),
    PARLEY_PLAN_AGENCY_CONCURRENT_CALLS: String(Math.max(50, maxCalls)),
  };
  const account = JSON.parse(await runCli(["admin", "account", "create", "--name", "bench", "--plan", "agency", "--credits", "100000", "--json"], env)) as { id: string };
  const key = JSON.parse(await runCli(["admin", "key", "create", "--account", account.id, "--name", "bench", "--json"], env)) as { key: string };
  const child: ChildProcess = spawn(process.execPath, [CLI, "serve"], { env, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = stderr.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    void exited.then((code) => reject(new Error(`parley serve exited ${code} before listening: ${stderr}`)));
  });
  return {
    baseUrl,
    key: key.key,
    pid: child.pid!,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
