import { execFileSync } from "node:child_process";

/**
 * Runs `body` while this process may grow no file past `bytes` (RLIMIT_FSIZE, set with
 * prlimit): a real "file too large" (EFBIG) for every write beyond it, as a disk filling up
 * gives. Node ignores SIGXFSZ, so the write fails instead of killing the process. Vitest runs
 * each test file in its own process: no other file's tests are limited.
 */
export async function withFileSizeLimit<T>(bytes: number, body: () => Promise<T>): Promise<T> {
  const pid = String(process.pid);
  const soft = execFileSync("prlimit", ["--pid", pid, "--fsize", "--output", "SOFT", "--noheadings"], { encoding: "utf8" }).trim();
  execFileSync("prlimit", ["--pid", pid, `--fsize=${bytes}:`]);
  try {
    return await body();
  } finally {
    execFileSync("prlimit", ["--pid", pid, `--fsize=${soft}:`]);
  }
}
