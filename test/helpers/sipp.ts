import { spawn, type ChildProcess } from "node:child_process";
import dgram from "node:dgram";
import { existsSync } from "node:fs";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";

/** SIPp (Debian's sip-tester, installed by setup): a missing sipp fails tests, never skips them. */
export const SIPP = "/usr/bin/sipp";
/** Where sip-tester ships the pcap files the built-in uac_pcap scenario plays. */
const PCAP_DIR = "/usr/share/sip-tester";

/** A UDP port free on `host` right now. */
export async function freeUdpPort(host = "127.0.0.1"): Promise<number> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export interface Sipp {
  process: ChildProcess;
  /** Resolves with the exit code (and output, for failure messages). */
  exited: Promise<{ code: number | null; output: string }>;
  /** Kills sipp if it still runs and removes its directory. */
  cleanup(): Promise<void>;
}

/**
 * Runs sipp in a temp directory (its logs go there; `pcap/` points at sip-tester's pcaps). It
 * fails if its scenario has not finished after `timeoutSeconds` (default 30).
 */
export async function startSipp(args: string[], { timeoutSeconds = 30 } = {}): Promise<Sipp> {
  expect(existsSync(SIPP), `${SIPP} is missing: run the setup script`).toBe(true);
  const cwd = await mkdtemp(join(tmpdir(), "parley-sipp-"));
  await symlink(PCAP_DIR, join(cwd, "pcap"));
  const child = spawn(SIPP, [...args, "-nostdin", "-trace_err", "-timeout", `${timeoutSeconds}s`, "-timeout_error"], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on("exit", (code) => resolve({ code, output: output.slice(-3000) }));
    child.on("error", (error) => resolve({ code: -1, output: String(error) }));
  });
  return {
    process: child,
    exited,
    cleanup: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      await rm(cwd, { recursive: true, force: true });
    },
  };
}
