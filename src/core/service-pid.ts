import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PRIVATE_FILE_MODE } from "./private-files.js";

/** `parley serve` writes its process id here while it runs: `restore` names it when it refuses. */
export const SERVICE_PID_FILE = "parley.pid";

/** Marks the data directory as served by this process until it exits. */
export function writeServicePid(dataDir: string): void {
  writeFileSync(path.join(dataDir, SERVICE_PID_FILE), `${process.pid}\n`, { mode: PRIVATE_FILE_MODE });
  process.once("exit", () => rmSync(path.join(dataDir, SERVICE_PID_FILE), { force: true }));
}

/** The process serving `dataDir` now, if any (a pid file left by a killed process names no live process). */
export function runningService(dataDir: string): number | undefined {
  const file = path.join(dataDir, SERVICE_PID_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}
