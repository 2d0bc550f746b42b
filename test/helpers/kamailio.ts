import { spawn, type ChildProcess } from "node:child_process";
import dgram from "node:dgram";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { parseSipMessage } from "../../engine/transports/sip/sip-message.js";
import { freeUdpPort } from "./sipp.js";
import { until } from "./until.js";

/** Debian's kamailio (installed by setup): a missing binary fails tests, never skips them. */
export const KAMAILIO = "/usr/sbin/kamailio";
/** The configuration shipped for operators: the tests run exactly it, only its defines differ. */
export const KAMAILIO_CFG = fileURLToPath(new URL("../../docs/deploy/kamailio.cfg", import.meta.url));

export interface KamailioOptions {
  /** Seconds between OPTIONS probes of each node (PING_INTERVAL). */
  pingInterval?: number;
  /** Failed probes before a node is taken out (PROBING_THRESHOLD). */
  probingThreshold?: number;
  /** Milliseconds a node has to answer at all (FR_TIMER). */
  frTimer?: number;
}

export interface Kamailio {
  host: string;
  port: number;
  /** What kamailio printed so far (its xlog lines: dispatched INVITEs, nodes down and up). */
  output(): string;
  /** Waits until kamailio has printed a line matching `pattern`. */
  printed(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Ends kamailio (its whole process group) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Kamailio in the foreground on `host` and a free UDP port, dispatching INVITEs over `nodes`
 * (SIP addresses `host:port`) with docs/deploy/kamailio.cfg. Resolves once it answers an
 * OPTIONS sent to itself, i.e. its workers take requests.
 */
export async function startKamailio(nodes: string[], options: KamailioOptions = {}, host = "127.0.0.1"): Promise<Kamailio> {
  expect(existsSync(KAMAILIO), `${KAMAILIO} is missing: run the setup script`).toBe(true);
  const dir = await mkdtemp(join(tmpdir(), "parley-kamailio-"));
  const list = join(dir, "dispatcher.list");
  await writeFile(list, nodes.map((node) => `1 sip:${node} 0 0\n`).join(""));
  const port = await freeUdpPort(host);
  const defines = {
    LISTEN: `udp:${host}:${port}`,
    DISPATCHER_LIST: JSON.stringify(list),
    PING_INTERVAL: String(options.pingInterval ?? 1),
    PROBING_THRESHOLD: String(options.probingThreshold ?? 1),
    FR_TIMER: String(options.frTimer ?? 1000),
  };
  const args = ["-DD", "-E", "-n", "2", "-m", "32", "-M", "4", "-Y", dir, "-P", join(dir, "kamailio.pid"), "-f", KAMAILIO_CFG];
  for (const [name, value] of Object.entries(defines)) args.push("-A", `${name}=${value}`);
  // Its own process group: stop() ends the main process and the workers it forked together.
  const child: ChildProcess = spawn(KAMAILIO, args, { cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => {
    child.on("exit", () => resolve());
    child.on("error", (error) => {
      output += String(error);
      resolve();
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const signal = (name: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, name);
    } catch {
      // Already gone.
    }
  };
  const stop = async () => {
    if (running()) signal("SIGTERM");
    const killer = setTimeout(() => signal("SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await until("kamailio to answer OPTIONS", async () => {
      if (!running()) throw new Error(`kamailio exited:\n${output.slice(-3000)}`);
      return answersOptions(host, port);
    }, 15_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    host,
    port,
    output: () => output,
    printed: (pattern, timeoutMs = 20_000) => until(`kamailio to print ${pattern}:\n${output.slice(-3000)}`, () => pattern.test(output), timeoutMs),
    stop,
  };
}

/** Whether an OPTIONS to the proxy itself gets a 200 within 200 ms. */
async function answersOptions(host: string, port: number): Promise<boolean> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  try {
    const local = socket.address().port;
    const request = [
      `OPTIONS sip:${host}:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP ${host}:${local};branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
      "Max-Forwards: 70",
      `From: <sip:probe@${host}>;tag=probe`,
      `To: <sip:${host}:${port}>`,
      `Call-ID: ${Math.random().toString(36).slice(2)}@${host}`,
      "CSeq: 1 OPTIONS",
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 200);
      socket.on("message", (data) => {
        const message = parseSipMessage(data);
        if (message.kind === "response" && message.status === 200) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      socket.send(Buffer.from(request), port, host);
    });
  } finally {
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}
