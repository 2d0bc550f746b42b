import { afterEach, describe, expect, it } from "vitest";
import type { IncomingRefer } from "../../../../../engine/transports/sip/sip-call.js";
import { getTo, getTopVia } from "../../../../../engine/transports/sip/sip-message.js";
import type { IncomingCall } from "../../../../../engine/transports/sip/incoming-call.js";
import { SipUserAgent, type SipUserAgentOptions } from "../../../../../engine/transports/sip/sip-user-agent.js";
import { FakeClock } from "../../../../helpers/fake-clock.js";
import { requestText } from "../../../../helpers/sip-raw-peer.js";
import { agent, cleanups, connect, HOST, once, rawPeer, rawRequest, runCleanups } from "../../../../helpers/sip-agents.js";

afterEach(runCleanups);

/** A user agent on loopback with a fake clock (its transaction timers move only when told). */
async function fakeClockAgent(options: Partial<SipUserAgentOptions> = {}) {
  const clock = new FakeClock();
  const ua = await SipUserAgent.start({ host: HOST, clock, ...options });
  cleanups.push(() => ua.close());
  return { ua, clock };
}

describe("SipUserAgent", () => {
  it("ends the call with BYE from the callee", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const hangup = once<[string]>(uacCall, "hangup");
    await uasCall.hangUp();
    expect((await hangup)[0]).toBe("remote_hangup");
    expect(uacCall.active).toBe(false);
  });

  it("answers OPTIONS outside a dialog with 200 and Allow", async () => {
    const { ua } = await agent();
    const response = await rawRequest(ua.port, (port) => `OPTIONS sip:${HOST}:${ua.port} SIP/2.0
Via: SIP/2.0/UDP ${HOST}:${port};branch=z9hG4bKopt1
From: <sip:probe@${HOST}:${port}>;tag=a1
To: <sip:${HOST}:${ua.port}>
Call-ID: options-1@${HOST}
CSeq: 1 OPTIONS
Max-Forwards: 70
Content-Length: 0

`);
    expect(response.status).toBe(200);
    expect(response.headers.getAll("Allow")).toEqual(expect.arrayContaining(["INVITE", "BYE", "CANCEL", "REFER"]));
  });

  it("answers a BYE for an unknown dialog with 481", async () => {
    const { ua } = await agent();
    const response = await rawRequest(ua.port, (port) => `BYE sip:parley@${HOST}:${ua.port} SIP/2.0
Via: SIP/2.0/UDP ${HOST}:${port};branch=z9hG4bKbye1
From: <sip:probe@${HOST}:${port}>;tag=a1
To: <sip:parley@${HOST}:${ua.port}>;tag=nosuchdialog
Call-ID: nosuch@${HOST}
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

`);
    expect(response.status).toBe(481);
  });

  it("REFER is accepted and resolves when the far end NOTIFYs 200", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const referred = new Promise<string>((resolve) => {
      uasCall.on("refer", (refer: IncomingRefer) => {
        resolve(refer.target);
        void refer.notify(200, "OK");
      });
    });
    await uacCall.refer("sip:+15559999@example.com");
    expect(await referred).toBe("sip:+15559999@example.com");
  });

  it("REFER without a listener on the far end is declined", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall } = await connect(caller.ua, callee);
    await expect(uacCall.refer("sip:+15559999@example.com")).rejects.toMatchObject({ status: 603 });
  });
});

describe("SipUserAgent under attack", () => {
  it("sends a response to the request's real source, not to a received= or rport= the sender wrote in its Via", async () => {
    const { ua } = await agent();
    const attacker = await rawPeer();
    // The victims: a host the forged received= names (on the same port), and another port on the attacker's host.
    const elsewhere = await rawPeer("127.0.0.2", attacker.port);
    const otherPort = await rawPeer();
    attacker.send(requestText(attacker.port, "z9hG4bKforged1", { method: "OPTIONS", via: `${HOST}:${attacker.port};received=127.0.0.2` }), ua.port);
    attacker.send(requestText(attacker.port, "z9hG4bKforged2", { method: "OPTIONS", via: `${HOST}:${attacker.port};rport=${otherPort.port}` }), ua.port);
    attacker.send(requestText(attacker.port, "z9hG4bKforged3", { method: "OPTIONS", via: `${HOST}:${attacker.port};rport;received=127.0.0.2` }), ua.port);
    // A plain request last: its answer arrives after the others were sent.
    attacker.send(requestText(attacker.port, "z9hG4bKplain", { method: "OPTIONS" }), ua.port);
    await new Promise<void>((resolve) => {
      const check = () => (attacker.to("z9hG4bKplain").length > 0 ? resolve() : setImmediate(check));
      check();
    });
    await new Promise((resolve) => setImmediate(resolve));
    for (const branch of ["z9hG4bKforged1", "z9hG4bKforged2", "z9hG4bKforged3"]) expect(attacker.to(branch).map((r) => r.status), branch).toEqual([200]);
    expect(elsewhere.responses).toEqual([]);
    expect(otherPort.responses).toEqual([]);
    const [stamped] = attacker.to("z9hG4bKforged1");
    expect(getTopVia(stamped!).params.received ?? HOST).toBe(HOST);
  });

  it("refuses a flood of INVITEs from a source it does not accept statelessly: one 403 each, no bigger than the INVITE, no transaction, no retransmission", async () => {
    const { ua, clock } = await fakeClockAgent({
      acceptsSource: () => false,
      // What the gateway did before sources were checked ahead of the transaction.
      onInvite: (call) => call.reject(403, "Forbidden"),
    });
    const flooder = await rawPeer();
    const FLOOD = 300;
    // In bursts of 50, so loopback's socket buffers never overflow and drop datagrams.
    for (let i = 0; i < FLOOD; i += 50) {
      for (let j = i; j < i + 50; j++) flooder.send(requestText(flooder.port, `z9hG4bKflood${j}`), ua.port);
      await flooder.received(i + 50);
    }
    // Memory under the flood: nothing is kept for a refused request.
    expect(ua.layer.size).toBe(0);
    expect(ua.activeCalls).toBe(0);
    // Long past Timer H: a transaction would have re-sent each 403 about ten times by now.
    clock.advance(64 * 500);
    flooder.send(requestText(flooder.port, "z9hG4bKlast"), ua.port);
    await flooder.received(FLOOD + 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(flooder.responses).toHaveLength(FLOOD + 1);
    expect(new Set(flooder.responses.map((r) => getTopVia(r.response).params.branch)).size).toBe(FLOOD + 1);
    expect(flooder.responses.every((r) => r.response.status === 403 && getTo(r.response).params.tag !== undefined)).toBe(true);
    expect(flooder.responses.reduce((sum, r) => sum + r.bytes, 0)).toBeLessThanOrEqual(flooder.sentBytes);
    expect(ua.layer.size).toBe(0);
  });

  it("answers requests for dialogs it does not have with one stateless 481", async () => {
    const { ua, clock } = await fakeClockAgent({ acceptsSource: () => true });
    const peer = await rawPeer();
    for (let i = 0; i < 20; i++) peer.send(requestText(peer.port, `z9hG4bKnodialog${i}`, { toTag: `nosuch${i}` }), ua.port);
    await peer.received(20);
    expect(ua.layer.size).toBe(0);
    clock.advance(64 * 500);
    peer.send(requestText(peer.port, "z9hG4bKnodialogbye", { toTag: "nosuch", method: "BYE" }), ua.port);
    await peer.received(21);
    await new Promise((resolve) => setImmediate(resolve));
    expect(peer.responses.map((r) => r.response.status)).toEqual(Array(21).fill(481));
    expect(ua.layer.size).toBe(0);
  });

  it("caps server transactions: past maxTransactions a request gets one stateless 503 with Retry-After; capacity returns as they end", async () => {
    const { ua, clock } = await fakeClockAgent({ maxTransactions: 4 });
    const peer = await rawPeer();
    for (let i = 0; i < 4; i++) peer.send(requestText(peer.port, `z9hG4bKcap${i}`, { method: "OPTIONS" }), ua.port);
    await peer.received(4);
    expect(ua.layer.size).toBe(4); // each OPTIONS transaction absorbs retransmissions for 64*T1
    peer.send(requestText(peer.port, "z9hG4bKover1", { method: "OPTIONS" }), ua.port);
    peer.send(requestText(peer.port, "z9hG4bKover2"), ua.port);
    await peer.received(6);
    for (const branch of ["z9hG4bKover1", "z9hG4bKover2"]) {
      const [response] = peer.to(branch);
      expect(response?.status, branch).toBe(503);
      expect(response?.headers.get("Retry-After"), branch).toMatch(/^\d+$/);
    }
    expect(ua.layer.size).toBe(4);
    clock.advance(64 * 500);
    expect(ua.layer.size).toBe(0);
    peer.send(requestText(peer.port, "z9hG4bKafter", { method: "OPTIONS" }), ua.port);
    await peer.received(7);
    await new Promise((resolve) => setImmediate(resolve));
    expect(peer.to("z9hG4bKafter").map((r) => r.status)).toEqual([200]);
    expect(peer.responses).toHaveLength(7); // the 503s were not re-sent
  });

  it("keeps a reserve past the transaction cap for requests within live calls: a flood that fills the cap does not stop a call from hanging up", async () => {
    const caller = await agent();
    const callee = await agent({ maxTransactions: 4 });
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const flooder = await rawPeer();
    for (let i = 0; flooder.to(`z9hG4bKfill${i - 1}`)[0]?.status !== 503; i++) {
      flooder.send(requestText(flooder.port, `z9hG4bKfill${i}`, { method: "OPTIONS" }), callee.ua.port);
      await flooder.received(i + 1);
    }
    expect(callee.ua.layer.size).toBe(4);
    const hungUp = once(uasCall, "hangup");
    await uacCall.hangUp();
    await hungUp;
    expect(callee.ua.activeCalls).toBe(0);
  });

  it("caps calls: an INVITE past maxCalls (answered calls and ones waiting for a decision) gets a stateless 503 with Retry-After", async () => {
    const waiting: IncomingCall[] = [];
    const callee = await SipUserAgent.start({
      host: HOST,
      maxCalls: 2,
      onInvite: (call) => {
        if (waiting.length === 0) void call.answer();
        else if (waiting.length === 1) waiting.push(call);
        else call.reject(486, "Busy Here");
        if (waiting.length === 0) waiting.push(call);
      },
    });
    cleanups.push(() => callee.close());
    const caller = await SipUserAgent.start({ host: HOST });
    cleanups.push(() => caller.close());
    const answered = await caller.invite({ to: `sip:1@${HOST}:${callee.port}` }).result;
    const peer = await rawPeer();
    peer.send(requestText(peer.port, "z9hG4bKpending"), callee.port);
    await new Promise<void>((resolve) => {
      const check = () => (waiting.length === 2 ? resolve() : setImmediate(check));
      check();
    });
    peer.send(requestText(peer.port, "z9hG4bKthird"), callee.port);
    await new Promise<void>((resolve) => {
      const check = () => (peer.to("z9hG4bKthird").some((r) => r.status >= 200) ? resolve() : setImmediate(check));
      check();
    });
    const third = peer.to("z9hG4bKthird").find((r) => r.status >= 200)!;
    expect(third.status).toBe(503);
    expect(third.headers.get("Retry-After")).toMatch(/^\d+$/);
    // A slot frees when the waiting call is settled and when the answered one ends.
    waiting[1]!.reject(480, "Temporarily Unavailable");
    await answered.hangUp();
    expect(callee.activeCalls).toBe(0);
    await expect(caller.invite({ to: `sip:1@${HOST}:${callee.port}` }).result).rejects.toMatchObject({ status: 486 });
  });
});
