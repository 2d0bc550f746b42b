import dgram from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { digestAuthorization, parseDigestChallenge } from "../../../../../engine/transports/sip/digest-auth.js";
import { buildResponse, getCallId, getCSeq, getFrom, getTo, getTopVia, parseSipMessage, serializeSipMessage, type SipRequest } from "../../../../../engine/transports/sip/sip-message.js";
import { rawSipPeer } from "../../../../helpers/sip-raw-peer.js";
import { agent, cleanups, HOST, once, runCleanups } from "../../../../helpers/sip-agents.js";

afterEach(runCleanups);

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

/** Checks a Digest answer by computing it again from the challenge with the answer's own cnonce. */
function expectDigestAnswer(answer: string | undefined, challenge: string, credentials: { username: string; password: string }, request: SipRequest): void {
  const cnonce = /cnonce="([^"]+)"/.exec(answer ?? "")?.[1];
  expect(answer).toBe(digestAuthorization(parseDigestChallenge(challenge)!, credentials, { method: request.method, uri: request.uri }, cnonce));
}

describe("OutgoingCall", () => {
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
});
