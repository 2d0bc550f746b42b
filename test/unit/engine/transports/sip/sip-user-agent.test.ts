import dgram from "node:dgram";
import type { EventEmitter } from "eventemitter3";
import { afterEach, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { SipCallTransport } from "../../../../../engine/transports/sip/sip-call-transport.js";
import { SipCallError, type IncomingRefer } from "../../../../../engine/transports/sip/sip-call.js";
import { parseSipMessage, type SipResponse } from "../../../../../engine/transports/sip/sip-message.js";
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

