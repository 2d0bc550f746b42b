import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";

/** tcpdump (Debian's, installed by setup): a missing tcpdump fails tests, never skips them. */
export const TCPDUMP = "/usr/bin/tcpdump";

/** One UDP datagram as it was delivered on the loopback interface. */
export interface CapturedDatagram {
  /** Capture time, epoch milliseconds (the same clock as Date.now()). */
  at: number;
  payload: Uint8Array;
}

export interface UdpCapture {
  /** Every datagram captured so far (tcpdump writes each packet as it comes: `-U`). */
  datagrams(): Promise<CapturedDatagram[]>;
  /** Stops tcpdump and removes its file. */
  stop(): Promise<void>;
}

/**
 * Captures, with tcpdump on `lo`, the UDP datagrams sent to one loopback port: what a peer
 * bound there (sipp, which cannot record what it receives) was sent, with no relay in between.
 */
export async function captureUdpTo(port: number): Promise<UdpCapture> {
  expect(existsSync(TCPDUMP), `${TCPDUMP} is missing: run the setup script`).toBe(true);
  const dir = await mkdtemp(join(tmpdir(), "parley-capture-"));
  const file = join(dir, "capture.pcap");
  // --immediate-mode: each packet is written when it comes, not in blocks up to a second late,
  // so a test can wait on what has arrived. -Z root: tcpdump would otherwise drop to its own
  // user, who cannot write in this directory.
  const child = spawn(TCPDUMP, ["-i", "lo", "-n", "-U", "--immediate-mode", "-Z", "root", "-w", file, `udp and dst host 127.0.0.1 and dst port ${port}`], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("listening on")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`tcpdump exited (${code}) before capturing: ${stderr}`)));
  });
  return {
    datagrams: async () => (existsSync(file) ? parsePcap(await readFile(file)) : []),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const PCAP_MAGIC_MICROSECONDS = 0xa1b2c3d4;
const LINKTYPE_ETHERNET = 1;
const ETHERTYPE_IPV4 = 0x0800;
const IP_PROTOCOL_UDP = 17;

/**
 * The UDP payloads of a classic pcap file of Ethernet frames (what tcpdump writes for Linux's
 * `lo`). A record still being written at the end is left out.
 */
export function parsePcap(file: Uint8Array): CapturedDatagram[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.byteLength < 24) return [];
  const littleEndian = view.getUint32(0, true) === PCAP_MAGIC_MICROSECONDS;
  if (!littleEndian && view.getUint32(0, false) !== PCAP_MAGIC_MICROSECONDS) throw new Error("not a microsecond pcap file");
  const linkType = view.getUint32(20, littleEndian);
  if (linkType !== LINKTYPE_ETHERNET) throw new Error(`pcap link type ${linkType}, expected Ethernet`);
  const out: CapturedDatagram[] = [];
  for (let offset = 24; offset + 16 <= file.byteLength; ) {
    const seconds = view.getUint32(offset, littleEndian);
    const micros = view.getUint32(offset + 4, littleEndian);
    const length = view.getUint32(offset + 8, littleEndian);
    const frame = offset + 16;
    if (frame + length > file.byteLength) break;
    offset = frame + length;
    if (view.getUint16(frame + 12) !== ETHERTYPE_IPV4) continue;
    const ip = frame + 14;
    if (view.getUint8(ip + 9) !== IP_PROTOCOL_UDP) continue;
    const udp = ip + (view.getUint8(ip) & 0x0f) * 4;
    const udpLength = view.getUint16(udp + 4);
    out.push({ at: seconds * 1000 + micros / 1000, payload: file.subarray(udp + 8, udp + udpLength) });
  }
  return out;
}
