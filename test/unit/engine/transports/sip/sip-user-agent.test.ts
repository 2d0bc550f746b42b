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
import { IncomingCall, SipUserAgent } from "../../../../../engine/transports/sip/sip-user-agent.js";

const HOST = "127.0.0.1";
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A user agent on loopback whose inbound calls queue up in `invites`. */
async function agent(): Promise<{ ua: SipUserAgent; nextInvite: () => Promise<IncomingCall> }> {
  const queue: IncomingCall[] = [];
  const waiters: ((call: IncomingCall) => void)[] = [];
  const ua = await SipUserAgent.start({
    host: HOST,
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
  };
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

