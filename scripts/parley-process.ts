import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { packageRoot } from "../engine/index.js";

/**
 * The `parley` command as a child process, for tests and the benchmark: run a command, or
 * start `parley serve` and wait until it says where it listens.
 */

/** The built CLI (`npm test` builds first, see the pretest script). */
export const CLI = path.join(packageRoot(import.meta.url), "dist/src/cli/main.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, options: RunOptions = {}): Promise<CliResult> {
  return runNodeScript(CLI, args, env, options);
}

export interface RunOptions {
  /** Kill the process (SIGTERM) if it is still running after this long: a command that should exit must not hang a test. */
  killAfterMs?: number;
}

/** Runs a built script with this Node and collects its exit code and output. */
export function runNodeScript(script: string, args: string[], env: NodeJS.ProcessEnv = {}, options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.killAfterMs !== undefined ? { timeout: options.killAfterMs } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a CLI command that prints JSON (`--json`) and returns what it printed. */
export async function runCliJson<T = any>(args: string[], env: NodeJS.ProcessEnv): Promise<T> {
  const result = await runCli([...args, "--json"], env);
  if (result.code !== 0) throw new Error(`parley ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** What it has printed so far: its JSON log lines on stdout, the start-up banner on stderr. */
  stdout: () => string;
  stderr: () => string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServerOptions {
  /** Where the service's stdout (its JSON log lines) goes: an open file descriptor. Default: a pipe that is read and dropped. */
  stdoutFd?: number;
  /** Options for Node itself, before the script (`--cpu-prof`, ...). */
  nodeArgs?: string[];
}

/** Starts `parley serve` on a free loopback port and waits until it says where it listens. */
export function startServer(env: NodeJS.ProcessEnv, options: ServerOptions = {}): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, "serve"], {
      // SIP off unless asked for: tests run servers side by side, and 5060 is one port.
      env: { ...process.env, PARLEY_HOST: "127.0.0.1", PARLEY_PORT: "0", PARLEY_LOG_LEVEL: "warn", PARLEY_SIP_PORT: "0", ...env },
      stdio: ["ignore", options.stdoutFd ?? "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = stderr.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (m) {
        resolve({
          child,
          baseUrl: `http://127.0.0.1:${m[1]}`,
          stdout: () => stdout,
          stderr: () => stderr,
          stop: (signal = "SIGTERM") => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`parley serve exited ${code} before listening: ${stderr}`)));
  });
}
