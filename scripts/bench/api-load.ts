import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** What the API load achieved while it ran (autocannon's figures). */
export interface ApiLoadResult {
  requests: number;
  duration_s: number;
  requests_per_s: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  /** Answers other than 2xx (a 429 means the account's rate limit, not the service, set the pace). */
  non_2xx: number;
  errors: number;
}

export interface ApiLoad {
  pid: number;
  /** Stops the load and returns what it achieved. */
  stop(): Promise<ApiLoadResult>;
}

/** The list endpoints the load cycles through: what a dashboard polling during calls asks for. */
export const API_LOAD_PATHS = ["/v1/agents?limit=20", "/v1/calls?limit=20"] as const;
/** Connections the load keeps busy (each sends its next request when the last is answered). */
export const API_LOAD_CONNECTIONS = 10;

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), "api-load-process.js");

/** Starts autocannon against `baseUrl` in a child process, with `key`. */
export function startApiLoad(baseUrl: string, key: string): ApiLoad {
  const child = spawn(process.execPath, [ENTRY, baseUrl, String(API_LOAD_CONNECTIONS), ...API_LOAD_PATHS], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PARLEY_API_KEY: key },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill("SIGTERM");
      const code = await exited;
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      if (code !== 0 || !line) throw new Error(`the API load exited ${code}: ${stderr.trim()}`);
      return JSON.parse(line) as ApiLoadResult;
    },
  };
}
