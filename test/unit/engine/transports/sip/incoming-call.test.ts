import dgram from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { SipCallError } from "../../../../../engine/transports/sip/sip-call.js";
import { serializeRtpPacket } from "../../../../../engine/transports/sip/rtp-packet.js";
import { encodeMulaw } from "../../../../../engine/audio/mulaw.js";
import { agent, audioFlows, cleanups, connect, HOST, once, rawRequest, runCleanups } from "../../../../helpers/sip-agents.js";

afterEach(runCleanups);

describe("IncomingCall", () => {
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
});

describe("IncomingCall under attack", () => {
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
});
