import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time and resident memory of a process and all its descendants (the server spawns one
 * recognizer process per live call), read from Linux /proc. Null elsewhere.
 */
export interface TreeUsage {
  cpuMs: number;
  rssBytes: number;
  processes: number;
}

// USER_HZ is 100 on every Linux architecture Node runs on.
const TICK_MS = 10;
const PAGE_BYTES = 4096;

interface ProcStat {
  pid: number;
  ppid: number;
  cpuMs: number;
  rssBytes: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    return { pid, ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS, rssBytes: Number(fields[21]) * PAGE_BYTES };
  } catch {
    return undefined;
  }
}

export function processTreeUsage(root: number): TreeUsage | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const all = entries.filter((e) => /^\d+$/.test(e)).map((e) => readStat(Number(e))).filter((s): s is ProcStat => s !== undefined);
  const children = new Map<number, ProcStat[]>();
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const rootStat = all.find((s) => s.pid === root);
  if (!rootStat) return null;
  const usage: TreeUsage = { cpuMs: 0, rssBytes: 0, processes: 0 };
  const stack = [rootStat];
  while (stack.length > 0) {
    const s = stack.pop()!;
    usage.cpuMs += s.cpuMs;
    usage.rssBytes += s.rssBytes;
    usage.processes += 1;
    stack.push(...(children.get(s.pid) ?? []));
  }
  return usage;
}
