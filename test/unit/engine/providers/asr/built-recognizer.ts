import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../..");
const binary = path.join(root, "dist/native/pocketsphinx-recognizer");
const source = path.join(root, "engine/providers/asr/pocketsphinx/recognizer.c");

/** Builds the recognizer with the project's script when it is missing or older than its source. */
export function ensureRecognizerBuilt(): void {
  const built = statSync(binary, { throwIfNoEntry: false });
  if (built && built.mtimeMs >= statSync(source).mtimeMs) return;
  execFileSync("bash", [path.join(root, "scripts/build-native.sh")], { stdio: "pipe" });
}

/** Recognizer processes that this test process started (Linux /proc). */
export function recognizerPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // "pid (comm) state ppid ...": comm is cut to 15 characters and may hold spaces.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const [state, ppid] = stat.slice(close + 2).split(" ");
    if (comm === "pocketsphinx-re" && Number(ppid) === process.pid && state !== "Z") pids.push(Number(entry));
  }
  return pids;
}
