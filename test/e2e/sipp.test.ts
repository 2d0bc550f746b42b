import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import type { SipCall } from "../../engine/transports/sip/sip-call.js";
import { SipCallTransport } from "../../engine/transports/sip/sip-call-transport.js";
import type { IncomingCall } from "../../engine/transports/sip/incoming-call.js";
import { SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";
import { freeUdpPort, startSipp, type Sipp } from "../helpers/sipp.js";

/**
 * SIPp (sip-tester) as a real peer on loopback (see test/helpers/sipp.ts).
 */
const HOST = "127.0.0.1";
const SCENARIOS = fileURLToPath(new URL("./sipp/", import.meta.url));
const TIMEOUT = 40_000;

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const freePort = () => freeUdpPort(HOST);

/** Runs sipp, killed after the test. */
async function sipp(args: string[]): Promise<Sipp> {
  const run = await startSipp(args);
  cleanups.push(run.cleanup);
  return run;
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

/** Starts sipp as a callee with `args` and calls it from a new user agent of ours. */
async function dialSipp(args: string[], options: { credentials?: { username: string; password: string } }) {
  const ua = await agent();
  const port = await freePort();
  const peer = await sipp([...args, "-m", "1", "-i", HOST, "-p", String(port), "-mp", String(await freePort())]);
  // sipp needs a moment to bind; the INVITE is retransmitted (Timer A) until it answers.
  const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${port}`, from: "15550000", ...options });
  return { ua, outgoing, peer };
}

/** Our BYE ends a connected call; sipp must then exit 0 and our agent hold no call. */
async function hangUpAndExpectClean(ua: SipUserAgent, call: SipCall, peer: Sipp): Promise<void> {
  expect(call.rtp.remoteAddress?.address).toBe(HOST);
  await call.hangUp();
  const result = await peer.exited;
  expect(result.code, result.output).toBe(0);
  expect(ua.activeCalls).toBe(0);
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
      const { ua, outgoing, peer } = await dialSipp(["-sn", "uas"], {});
      const ringing = new Promise<number>((resolve) => outgoing.on("ringing", resolve));
      const call = await outgoing.result;
      expect(await ringing).toBe(180);
      await hangUpAndExpectClean(ua, call, peer);
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
    "authenticates to a trunk (uas-auth.xml): the INVITE challenged 407 then 401, and the BYE challenged 401, are sent again with valid Digest answers; sipp exits 0",
    async () => {
      const { ua, outgoing, peer } = await dialSipp(["-sf", join(SCENARIOS, "uas-auth.xml")], { credentials: { username: "parley", password: "trunk-secret" } });
      await hangUpAndExpectClean(ua, await outgoing.result, peer);
    },
    TIMEOUT,
  );

  it(
    "a wrong trunk password is refused (403) and sipp counts the call failed",
    async () => {
      const ua = await agent();
      const port = await freePort();
      const peer = await sipp(["-sf", join(SCENARIOS, "uas-auth.xml"), "-m", "1", "-i", HOST, "-p", String(port)]);
      const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${port}`, credentials: { username: "parley", password: "not-the-secret" } });
      await expect(outgoing.result).rejects.toMatchObject({ outcome: "rejected", status: 403 });
      const result = await peer.exited;
      expect(result.code, result.output).toBe(1);
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
