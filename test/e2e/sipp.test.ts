import { spawn, type ChildProcess } from "node:child_process";
import dgram from "node:dgram";
import { existsSync } from "node:fs";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import type { SipCall } from "../../engine/transports/sip/sip-call.js";
import { SipCallTransport } from "../../engine/transports/sip/sip-call-transport.js";
import { IncomingCall, SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";

/**
 * SIPp (sip-tester) as a real peer on loopback. Setup installs it; a missing sipp fails these
 * tests rather than skipping them.
 */
const SIPP = "/usr/bin/sipp";
const HOST = "127.0.0.1";
const SCENARIOS = fileURLToPath(new URL("./sipp/", import.meta.url));
/** Where Debian's sip-tester ships the pcap files the built-in uac_pcap scenario plays. */
const PCAP_DIR = "/usr/share/sip-tester";
const TIMEOUT = 40_000;

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freePort(): Promise<number> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

interface Sipp {
  process: ChildProcess;
  /** Resolves with the exit code (and output, for failure messages). */
  exited: Promise<{ code: number | null; output: string }>;
}

/** Runs sipp in a temp directory (its logs go there), killed after the test. */
async function sipp(args: string[]): Promise<Sipp> {
  expect(existsSync(SIPP), `${SIPP} is missing: run the setup script`).toBe(true);
  const cwd = await mkdtemp(join(tmpdir(), "parley-sipp-"));
  // The built-in uac_pcap scenario plays "pcap/g711a.pcap" relative to the working directory.
  await symlink(PCAP_DIR, join(cwd, "pcap"));
  const child = spawn(SIPP, [...args, "-nostdin", "-trace_err", "-timeout", "30s", "-timeout_error"], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on("exit", (code) => resolve({ code, output: output.slice(-3000) }));
    child.on("error", (error) => resolve({ code: -1, output: String(error) }));
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    await rm(cwd, { recursive: true, force: true });
  });
  return { process: child, exited };
}

async function agent(onInvite?: (call: IncomingCall) => void): Promise<SipUserAgent> {
  const ua = await SipUserAgent.start({ host: HOST, ...(onInvite ? { onInvite } : {}) });
  cleanups.push(() => ua.close());
  return ua;
}

function rms(frame: AudioFrame): number {
  let sum = 0;
  for (const sample of frame.samples) sum += sample * sample;
  return Math.sqrt(sum / frame.samples.length);
}

describe("SIP against sipp", () => {
  it(
    "answers sipp's built-in uac: INVITE for 15551234, 200, ACK, BYE, sipp exits 0",
    async () => {
      const invites: IncomingCall[] = [];
      let answered!: (call: SipCall) => void;
      const call = new Promise<SipCall>((resolve) => (answered = resolve));
      const ua = await agent((incoming) => {
        invites.push(incoming);
        void incoming.answer({ ring: true }).then(answered);
      });
      const peer = await sipp([`${HOST}:${ua.port}`, "-sn", "uac", "-s", "15551234", "-m", "1", "-i", HOST, "-p", String(await freePort()), "-mp", String(await freePort())]);
      const sipCall = await call;
      const hangup = new Promise<string>((resolve) => {
        if (!sipCall.active) resolve("remote_hangup");
        sipCall.on("hangup", resolve);
      });
      const result = await peer.exited;
      expect(result.code, result.output).toBe(0);
      expect(await hangup).toBe("remote_hangup");
      expect(invites).toHaveLength(1);
      expect(invites[0]!.to).toBe("15551234");
      expect(invites[0]!.from).toBe("sipp");
      expect(ua.activeCalls).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "calls sipp's built-in uas, which answers; our BYE ends it and sipp exits 0",
    async () => {
      const ua = await agent();
      const port = await freePort();
      const peer = await sipp(["-sn", "uas", "-m", "1", "-i", HOST, "-p", String(port), "-mp", String(await freePort())]);
      // sipp needs a moment to bind; the INVITE is retransmitted (Timer A) until it answers.
      const outgoing = ua.invite({ to: `sip:service@${HOST}:${port}`, from: "15550000" });
      const ringing = new Promise<number>((resolve) => outgoing.on("ringing", resolve));
      const call = await outgoing.result;
      expect(await ringing).toBe(180);
      expect(call.rtp.remoteAddress?.address).toBe(HOST);
      await call.hangUp();
      const result = await peer.exited;
      expect(result.code, result.output).toBe(0);
      expect(ua.activeCalls).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "an INVITE that sipp answers 486 rejects as busy",
    async () => {
      const ua = await agent();
      const port = await freePort();
      const peer = await sipp(["-sf", join(SCENARIOS, "uas-busy.xml"), "-m", "1", "-i", HOST, "-p", String(port)]);
      const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${port}` });
      await expect(outgoing.result).rejects.toMatchObject({ outcome: "busy", status: 486 });
      const result = await peer.exited;
      expect(result.code, result.output).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "receives RTP audio and RFC 4733 DTMF from sipp's uac_pcap (g711a.pcap, then dtmf 1)",
    async () => {
      const frames: AudioFrame[] = [];
      const digits: string[] = [];
      let onTransport!: (transport: SipCallTransport) => void;
      const answered = new Promise<SipCallTransport>((resolve) => (onTransport = resolve));
      const ua = await agent((incoming) => {
        void incoming.answer().then((call) => {
          const transport = new SipCallTransport(call);
          transport.on("audio", (frame) => frames.push(frame));
          transport.on("dtmf", (digit) => digits.push(digit));
          onTransport(transport);
        });
      });
      const peer = await sipp([`${HOST}:${ua.port}`, "-sn", "uac_pcap", "-s", "15551234", "-m", "1", "-i", HOST, "-p", String(await freePort()), "-mp", String(await freePort())]);
      const transport = await answered;
      const hangup = new Promise<string>((resolve) => transport.on("hangup", resolve));
      const result = await peer.exited;
      expect(result.code, result.output).toBe(0);
      expect(await hangup).toBe("remote_hangup");
      const loud = frames.filter((frame) => rms(frame) > 300);
      expect(frames.every((frame) => frame.sampleRate === 8000 && frame.samples.length === 160)).toBe(true);
      // g711a.pcap holds several seconds of speech: expect well over a second of it.
      expect(loud.length).toBeGreaterThan(50);
      expect(digits).toContain("1");
    },
    TIMEOUT,
  );
});
