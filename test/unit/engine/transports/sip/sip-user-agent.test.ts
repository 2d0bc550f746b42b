import dgram from "node:dgram";
import type { EventEmitter } from "eventemitter3";
import { afterEach, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { digestAuthorization, parseDigestChallenge } from "../../../../../engine/transports/sip/digest-auth.js";
import { SipCallTransport } from "../../../../../engine/transports/sip/sip-call-transport.js";
import { SipCallError, type IncomingRefer } from "../../../../../engine/transports/sip/sip-call.js";
import {
  buildResponse,
  getCallId,
  getCSeq,
  getFrom,
  getTo,
  getTopVia,
  parseSipMessage,
  serializeSipMessage,
  type SipRequest,
  type SipResponse,
} from "../../../../../engine/transports/sip/sip-message.js";
import { serializeRtpPacket } from "../../../../../engine/transports/sip/rtp-packet.js";
import { encodeMulaw } from "../../../../../engine/audio/mulaw.js";
import { IncomingCall, SipUserAgent, type SipUserAgentOptions } from "../../../../../engine/transports/sip/sip-user-agent.js";
import { FakeClock } from "../../../../helpers/fake-clock.js";
import { rawSipPeer, requestText } from "../../../../helpers/sip-raw-peer.js";

const HOST = "127.0.0.1";
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A user agent on loopback whose inbound calls queue up in `invites`. */
async function agent(options: Partial<SipUserAgentOptions> = {}): Promise<{ ua: SipUserAgent; nextInvite: () => Promise<IncomingCall> }> {
  const queue: IncomingCall[] = [];
  const waiters: ((call: IncomingCall) => void)[] = [];
  const ua = await SipUserAgent.start({
    host: HOST,
    ...options,
    onInvite: (call) => {
      const waiter = waiters.shift();
      if (waiter) waiter(call);
      else queue.push(call);
    },
  });
  cleanups.push(() => ua.close());
  const nextInvite = () => {
    const queued = queue.shift();
    return queued ? Promise.resolve(queued) : new Promise<IncomingCall>((resolve) => waiters.push(resolve));
  };
  return { ua, nextInvite };
}

function tone(): AudioFrame {
  const samples = new Int16Array(160);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return { samples, sampleRate: 8000 };
}

function rms(frame: AudioFrame): number {
  let sum = 0;
  for (const sample of frame.samples) sum += sample * sample;
  return Math.sqrt(sum / frame.samples.length);
}

/** Sends tone frames from `sender` every 20 ms until `receiver` emits a frame with energy. */
async function audioFlows(send: (frame: AudioFrame) => void, receiver: { on(event: "audio", listener: (frame: AudioFrame) => void): unknown }): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<number>((resolve) => {
      receiver.on("audio", (frame) => {
        if (rms(frame) > 1000) resolve(rms(frame));
      });
      timer = setInterval(() => send(tone()), 20);
    });
  } finally {
    clearInterval(timer);
  }
}

/** Places a call from `caller` to `callee` and answers it. */
async function connect(caller: SipUserAgent, callee: Awaited<ReturnType<typeof agent>>) {
  const outgoing = caller.invite({ to: `sip:15551234@${HOST}:${callee.ua.port}`, from: "15550000" });
  const incoming = await callee.nextInvite();
  const answered = incoming.answer({ ring: true });
  const [uacCall, uasCall] = await Promise.all([outgoing.result, answered]);
  return { outgoing, incoming, uacCall, uasCall };
}

/** The arguments of the next `event` from an eventemitter3 emitter. */
function once<T extends unknown[]>(emitter: EventEmitter<any>, event: string): Promise<T> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args as T)));
}

/** Sends a raw SIP request from a plain UDP socket and returns the first final response. */
async function rawRequest(port: number, text: (localPort: number) => string): Promise<SipResponse> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const response = new Promise<SipResponse>((resolve) => {
    socket.on("message", (data) => {
      const message = parseSipMessage(data);
      if (message.kind === "response" && message.status >= 200) resolve(message);
    });
  });
  socket.send(Buffer.from(text(socket.address().port).replace(/\n/g, "\r\n")), port, HOST);
  return response;
}

/**
 * A trunk on a plain UDP socket, answered by hand: `next(method)` waits for the next request of
 * that method (a retransmission, same branch, is not a new one), `reply` answers it.
 */
async function rawTrunk() {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const seen = new Set<string>();
  const queue: SipRequest[] = [];
  const waiters: { method: string; resolve: (request: SipRequest) => void }[] = [];
  let peer = { address: HOST, port: 0 };
  socket.on("message", (data, from) => {
    const message = parseSipMessage(data);
    if (message.kind !== "request") return;
    peer = { address: from.address, port: from.port };
    const key = `${getTopVia(message).params.branch}|${message.method}`;
    if (seen.has(key)) return;
    seen.add(key);
    const waiter = waiters.findIndex((w) => w.method === message.method);
    if (waiter >= 0) waiters.splice(waiter, 1)[0]!.resolve(message);
    else queue.push(message);
  });
  return {
    port: socket.address().port,
    /** Every distinct request so far, in order. */
    received: () => [...seen].map((key) => key.split("|")[1]),
    next(method: string): Promise<SipRequest> {
      const queued = queue.findIndex((request) => request.method === method);
      if (queued >= 0) return Promise.resolve(queue.splice(queued, 1)[0]!);
      return new Promise((resolve) => waiters.push({ method, resolve }));
    },
    reply(request: SipRequest, status: number, reason: string, headers: [string, string][] = []): void {
      socket.send(serializeSipMessage(buildResponse(request, status, reason, { toTag: "trunk1", headers })), peer.port, peer.address);
    },
    replyWith(request: SipRequest, status: number, reason: string, headers: [string, string][], body: Buffer): void {
      socket.send(serializeSipMessage(buildResponse(request, status, reason, { toTag: "trunk1", headers, body })), peer.port, peer.address);
    },
  };
}

/** A raw SIP peer on loopback, closed after the test. */
async function rawPeer(host?: string, port?: number) {
  const peer = await rawSipPeer(host, port);
  cleanups.push(() => peer.close());
  return peer;
}

/** A user agent on loopback with a fake clock (its transaction timers move only when told). */
async function fakeClockAgent(options: Partial<SipUserAgentOptions> = {}) {
  const clock = new FakeClock();
  const ua = await SipUserAgent.start({ host: HOST, clock, ...options });
  cleanups.push(() => ua.close());
  return { ua, clock };
}

/** Checks a Digest answer by computing it again from the challenge with the answer's own cnonce. */
function expectDigestAnswer(answer: string | undefined, challenge: string, credentials: { username: string; password: string }, request: SipRequest): void {
  const cnonce = /cnonce="([^"]+)"/.exec(answer ?? "")?.[1];
  expect(answer).toBe(digestAuthorization(parseDigestChallenge(challenge)!, credentials, { method: request.method, uri: request.uri }, cnonce));
}

describe("SipUserAgent", () => {
  it("sets up a call (180, 200, ACK), carries RTP both ways and ends it with BYE from the caller", async () => {
    const caller = await agent();
    const callee = await agent();
    const outgoing = caller.ua.invite({ to: `sip:15551234@${HOST}:${callee.ua.port}`, from: "15550000" });
    const ringing = once<[number]>(outgoing, "ringing");
    const incoming = await callee.nextInvite();
    expect(incoming.from).toBe("15550000");
    expect(incoming.to).toBe("15551234");
    expect(incoming.source.address).toBe(HOST);
    const answered = incoming.answer({ ring: true });
    expect((await ringing)[0]).toBe(180);
    const [uacCall, uasCall] = await Promise.all([outgoing.result, answered]);
    expect(uacCall.callId).toBe(uasCall.callId);
    expect(uacCall.info.direction).toBe("outbound");
    expect(uasCall.info.remoteNumber).toBe("15550000");

    expect(await audioFlows((frame) => uacCall.sendAudio(frame), uasCall)).toBeGreaterThan(1000);
    expect(await audioFlows((frame) => uasCall.sendAudio(frame), uacCall)).toBeGreaterThan(1000);

    const hangup = once<[string]>(uasCall, "hangup");
    await uacCall.hangUp();
    expect((await hangup)[0]).toBe("remote_hangup");
    expect(caller.ua.activeCalls).toBe(0);
    expect(callee.ua.activeCalls).toBe(0);
  });

  it("ends the call with BYE from the callee", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const hangup = once<[string]>(uacCall, "hangup");
    await uasCall.hangUp();
    expect((await hangup)[0]).toBe("remote_hangup");
    expect(uacCall.active).toBe(false);
  });

  it("CANCEL before the answer gets the INVITE a 487 and marks the incoming call cancelled", async () => {
    const caller = await agent();
    const callee = await agent();
    const outgoing = caller.ua.invite({ to: `sip:15551234@${HOST}:${callee.ua.port}` });
    outgoing.on("ringing", () => outgoing.cancel());
    const incoming = await callee.nextInvite();
    const cancelled = once(incoming, "cancelled");
    incoming.ring();
    const error = await outgoing.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SipCallError);
    expect(error).toMatchObject({ outcome: "cancelled", status: 487 });
    await cancelled;
    expect(incoming.cancelled).toBe(true);
    await expect(incoming.answer()).rejects.toThrow(/cancelled/);
  });

  it("a 486 reject reaches the caller as busy", async () => {
    const caller = await agent();
    const callee = await agent();
    const outgoing = caller.ua.invite({ to: `sip:15551234@${HOST}:${callee.ua.port}` });
    (await callee.nextInvite()).reject(486, "Busy Here");
    await expect(outgoing.result).rejects.toMatchObject({ outcome: "busy", status: 486 });
    expect(caller.ua.activeCalls).toBe(0);
  });

  it("answers a 407 with the INVITE again (same Call-ID and From tag, next CSeq, new branch, same offer), once", async () => {
    const trunk = await rawTrunk();
    const { ua } = await agent();
    const credentials = { username: "parley", password: "trunk-secret" };
    const challenge = 'Digest realm="parley.test", nonce="n1", qop="auth"';
    const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}`, credentials });
    const first = await trunk.next("INVITE");
    expect(first.headers.has("Proxy-Authorization")).toBe(false);
    trunk.reply(first, 407, "Proxy Authentication Required", [["Proxy-Authenticate", challenge]]);
    expect(getCSeq(await trunk.next("ACK"))).toEqual({ seq: getCSeq(first).seq, method: "ACK" });

    const second = await trunk.next("INVITE");
    expect(getCallId(second)).toBe(getCallId(first));
    expect(getFrom(second).params.tag).toBe(getFrom(first).params.tag);
    expect(getTo(second).params.tag).toBeUndefined();
    expect(getCSeq(second).seq).toBe(getCSeq(first).seq + 1);
    expect(getTopVia(second).params.branch).not.toBe(getTopVia(first).params.branch);
    expect(second.body.toString()).toBe(first.body.toString());
    expectDigestAnswer(second.headers.get("Proxy-Authorization"), challenge, credentials, second);

    // Challenged again: the credentials were refused; no third INVITE.
    trunk.reply(second, 407, "Proxy Authentication Required", [["Proxy-Authenticate", 'Digest realm="parley.test", nonce="n2", qop="auth"']]);
    await expect(outgoing.result).rejects.toMatchObject({ outcome: "rejected", status: 407 });
    expect(trunk.received().filter((method) => method === "INVITE")).toHaveLength(2);
  });

  it("keeps earlier answers when the proxy and then the trunk challenge, and CANCELs the latest INVITE", async () => {
    const trunk = await rawTrunk();
    const { ua } = await agent();
    const credentials = { username: "parley", password: "trunk-secret" };
    const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}`, credentials });
    trunk.reply(await trunk.next("INVITE"), 407, "Proxy Authentication Required", [["Proxy-Authenticate", 'Digest realm="proxy", nonce="p1"']]);
    const second = await trunk.next("INVITE");
    trunk.reply(second, 401, "Unauthorized", [["WWW-Authenticate", 'Digest realm="trunk", nonce="t1", algorithm=SHA-256, qop="auth"']]);
    const third = await trunk.next("INVITE");
    expect(getCSeq(third).seq).toBe(getCSeq(second).seq + 1);
    expect(third.headers.get("Proxy-Authorization")).toBe(second.headers.get("Proxy-Authorization"));
    expectDigestAnswer(third.headers.get("Authorization"), 'Digest realm="trunk", nonce="t1", algorithm=SHA-256, qop="auth"', credentials, third);

    trunk.reply(third, 180, "Ringing");
    await once(outgoing, "ringing");
    outgoing.cancel();
    const cancel = await trunk.next("CANCEL");
    expect(getTopVia(cancel).params.branch).toBe(getTopVia(third).params.branch);
    expect(getCSeq(cancel)).toEqual({ seq: getCSeq(third).seq, method: "CANCEL" });
    trunk.reply(cancel, 200, "OK");
    trunk.reply(third, 487, "Request Terminated");
    await expect(outgoing.result).rejects.toMatchObject({ outcome: "cancelled", status: 487 });
  });

  it("answers a challenge only from the trunk: a 407 from another source gets no credentials and fails the call", async () => {
    const trunk = await rawTrunk();
    const { ua } = await agent();
    const credentials = { username: "parley", password: "trunk-secret" };
    const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}`, credentials });
    const invite = await trunk.next("INVITE");
    // Someone who saw the INVITE (its branch) answers it from elsewhere, asking for the trunk's password.
    const stranger = await rawSipPeer();
    cleanups.push(() => stranger.close());
    const challenge = buildResponse(invite, 407, "Proxy Authentication Required", { toTag: "x1", headers: [["Proxy-Authenticate", 'Digest realm="parley.test", nonce="n1", qop="auth"']] });
    stranger.send(serializeSipMessage(challenge).toString(), ua.port);
    await expect(outgoing.result).rejects.toMatchObject({ outcome: "rejected", status: 407 });
    // The transaction ACKs the 407 towards the trunk; no INVITE with credentials follows.
    await trunk.next("ACK");
    expect(trunk.received().filter((method) => method === "INVITE")).toHaveLength(1);
  });

  it("with a realm set, answers only the trunk's challenges naming it", async () => {
    const trunk = await rawTrunk();
    const { ua } = await agent();
    const credentials = { username: "parley", password: "trunk-secret", realm: "parley.test" };
    const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}`, credentials });
    trunk.reply(await trunk.next("INVITE"), 401, "Unauthorized", [["WWW-Authenticate", 'Digest realm="elsewhere.example", nonce="e1", qop="auth"']]);
    await expect(outgoing.result).rejects.toMatchObject({ outcome: "rejected", status: 401 });
    expect(trunk.received().filter((method) => method === "INVITE")).toHaveLength(1);

    const again = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}`, credentials });
    const challenge = 'Digest realm="parley.test", nonce="p1", qop="auth"';
    trunk.reply(await trunk.next("INVITE"), 401, "Unauthorized", [["WWW-Authenticate", challenge]]);
    const answered = await trunk.next("INVITE");
    expectDigestAnswer(answered.headers.get("Authorization"), challenge, credentials, answered);
    trunk.reply(answered, 486, "Busy Here");
    await expect(again.result).rejects.toMatchObject({ outcome: "busy" });
  });

  it("in a call through the trunk, a challenge from a far end that is not the trunk gets no credentials", async () => {
    const trunk = await rawTrunk();
    const { ua } = await agent();
    // The trunk hands the dialog to a callee on another host (its Contact): our BYE goes there.
    const callee = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => callee.bind(0, "127.0.0.2", resolve));
    cleanups.push(() => new Promise<void>((resolve) => callee.close(() => resolve())));
    const byes: SipRequest[] = [];
    callee.on("message", (data, from) => {
      const message = parseSipMessage(data);
      if (message.kind !== "request" || message.method !== "BYE") return;
      byes.push(message);
      const challenge = buildResponse(message, 401, "Unauthorized", { headers: [["WWW-Authenticate", 'Digest realm="parley.test", nonce="b1", qop="auth"']] });
      callee.send(serializeSipMessage(challenge), from.port, from.address);
    });
    const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}`, credentials: { username: "parley", password: "trunk-secret" } });
    const invite = await trunk.next("INVITE");
    const sdp = `v=0\r\no=- 1 1 IN IP4 ${HOST}\r\ns=-\r\nc=IN IP4 ${HOST}\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n`;
    trunk.replyWith(invite, 200, "OK", [["Contact", `<sip:callee@127.0.0.2:${callee.address().port}>`], ["Content-Type", "application/sdp"]], Buffer.from(sdp));
    const call = await outgoing.result;
    await call.hangUp();
    expect(byes).toHaveLength(1);
    expect(byes[0]!.headers.has("Authorization")).toBe(false);
  });

  it("without credentials a challenge fails the call", async () => {
    const trunk = await rawTrunk();
    const { ua } = await agent();
    const outgoing = ua.invite({ to: `sip:15551234@${HOST}:${trunk.port}` });
    trunk.reply(await trunk.next("INVITE"), 401, "Unauthorized", [["WWW-Authenticate", 'Digest realm="trunk", nonce="t1"']]);
    await expect(outgoing.result).rejects.toMatchObject({ outcome: "rejected", status: 401 });
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

  it("answers an INVITE whose offer has no G.711 with 488", async () => {
    const { ua, nextInvite } = await agent();
    void nextInvite().then((call) => call.answer().catch(() => undefined));
    const sdp = `v=0\r\no=- 1 1 IN IP4 ${HOST}\r\ns=-\r\nc=IN IP4 ${HOST}\r\nt=0 0\r\nm=audio 4000 RTP/AVP 9\r\na=rtpmap:9 G722/8000\r\n`;
    const response = await rawRequest(ua.port, (port) => `INVITE sip:1@${HOST}:${ua.port} SIP/2.0
Via: SIP/2.0/UDP ${HOST}:${port};branch=z9hG4bKinv488
From: <sip:probe@${HOST}:${port}>;tag=a1
To: <sip:1@${HOST}:${ua.port}>
Call-ID: g722@${HOST}
CSeq: 1 INVITE
Contact: <sip:probe@${HOST}:${port}>
Max-Forwards: 70
Content-Type: application/sdp

${sdp.replace(/\r\n/g, "\n")}`);
    expect(response.status).toBe(488);
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
  it("an answered call's RTP is neither latched onto nor heard from a stranger spraying its port before the caller speaks", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const stranger = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => stranger.bind(0, "127.0.0.2", resolve));
    cleanups.push(() => new Promise<void>((resolve) => stranger.close(() => resolve())));
    const strangerGot: Buffer[] = [];
    stranger.on("message", (data) => strangerGot.push(data));
    const loud = serializeRtpPacket({ marker: true, payloadType: 0, sequence: 1, timestamp: 0, ssrc: 66, csrcs: [], payload: encodeMulaw(new Int16Array(160).fill(20000)) });
    for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => stranger.send(loud, uasCall.rtp.localPort, HOST, () => resolve()));
    while (uasCall.rtp.stats.ignored + uasCall.rtp.stats.received < 10) await new Promise((resolve) => setImmediate(resolve));
    expect(uasCall.rtp.stats.received).toBe(0);
    expect(uasCall.rtp.remoteAddress).toEqual({ address: HOST, port: uacCall.rtp.localPort });
    expect(await audioFlows((frame) => uacCall.sendAudio(frame), uasCall)).toBeGreaterThan(1000);
    expect(await audioFlows((frame) => uasCall.sendAudio(frame), uacCall)).toBeGreaterThan(1000);
    expect(uasCall.rtp.remoteAddress).toEqual({ address: HOST, port: uacCall.rtp.localPort });
    expect(strangerGot).toEqual([]);
  });

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

describe("SipCallTransport", () => {
  it("is an 8 kHz MediaTransport: audio in, marks after sent audio, hangup on BYE, close sends BYE", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const transport = new SipCallTransport(uasCall);
    expect(transport.protocol).toBe("sip");
    expect(transport.inputSampleRate).toBe(8000);
    expect(transport.outputSampleRate).toBe(8000);
    expect(await audioFlows((frame) => uacCall.sendAudio(frame), transport)).toBeGreaterThan(1000);
    expect(await audioFlows((frame) => transport.sendAudio(frame), uacCall)).toBeGreaterThan(1000);
    const mark = once<[string]>(transport, "mark");
    transport.sendMark("m1");
    expect((await mark)[0]).toBe("m1");

    const hangup = once<[string]>(uacCall, "hangup");
    transport.close("agent_hangup");
    expect((await hangup)[0]).toBe("remote_hangup");

    const second = await connect(caller.ua, callee);
    const remote = new SipCallTransport(second.uasCall);
    const ended = once<[string]>(remote, "hangup");
    await second.uacCall.hangUp();
    expect((await ended)[0]).toBe("remote_hangup");
  });
});

