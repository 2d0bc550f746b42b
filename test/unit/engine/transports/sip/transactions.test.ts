import { beforeEach, describe, expect, it } from "vitest";
import { buildResponse, getCSeq, getTo, getTopVia, parseSipMessage, serializeSipMessage, type SipMessage, type SipRequest, type SipResponse } from "../../../../../engine/transports/sip/sip-message.js";
import { SipParseError } from "../../../../../engine/transports/sip/sip-parse-error.js";
import type { SipAddress, TransactionFailure } from "../../../../../engine/transports/sip/transaction.js";
import { createBranch, TransactionLayer, type IncomingRequest, type Refusal, type ServerTransaction } from "../../../../../engine/transports/sip/transaction-layer.js";
import { FakeClock } from "../../../../helpers/fake-clock.js";

const PEER: SipAddress = { address: "10.0.0.9", port: 5061 };
const ME = "10.0.0.5:5060";

interface Sent {
  at: number;
  message: SipMessage;
  to: string;
}

/** A transaction layer on a fake clock, recording what it sends and what reaches the TU. */
function harness(send?: (datagram: Buffer) => void | Promise<unknown>, options: { screen?: (request: SipRequest) => Refusal | undefined; maxServerTransactions?: number } = {}) {
  const clock = new FakeClock();
  const sent: Sent[] = [];
  const requests: IncomingRequest[] = [];
  const stray: SipResponse[] = [];
  const serverFailures: Array<{ transaction: ServerTransaction; reason: TransactionFailure }> = [];
  const malformed: SipParseError[] = [];
  const layer = new TransactionLayer({
    clock,
    send: (datagram, address, port) => {
      sent.push({ at: clock.now(), message: parseSipMessage(datagram), to: `${address}:${port}` });
      return send?.(datagram);
    },
    user: {
      request: (incoming) => requests.push(incoming),
      strayResponse: (response) => stray.push(response),
      serverTransactionFailed: (transaction, reason) => serverFailures.push({ transaction, reason }),
      malformed: (error) => malformed.push(error),
      ...(options.screen ? { screen: options.screen } : {}),
    },
    ...(options.maxServerTransactions !== undefined ? { maxServerTransactions: options.maxServerTransactions } : {}),
  });
  const receive = (message: SipMessage | string, from = PEER) =>
    layer.receive(typeof message === "string" ? Buffer.from(message) : serializeSipMessage(message), from);
  return { clock, sent, requests, stray, serverFailures, malformed, layer, receive };
}

/** A request as a peer at `via` sends it. */
function request(method: string, branch: string, options: { cseq?: string; via?: string; toTag?: string } = {}): SipRequest {
  const text = [
    `${method} sip:service@10.0.0.5 SIP/2.0`,
    `Via: SIP/2.0/UDP ${options.via ?? "10.0.0.9:5061"};branch=${branch}`,
    "Max-Forwards: 70",
    "From: <sip:caller@10.0.0.9>;tag=from1",
    `To: <sip:service@10.0.0.5>${options.toTag ? `;tag=${options.toTag}` : ""}`,
    "Call-ID: call-1@10.0.0.9",
    `CSeq: ${options.cseq ?? `1 ${method}`}`,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  return parseSipMessage(Buffer.from(text)) as SipRequest;
}

/** Our own outgoing request, with a fresh branch in a Via of ours. */
const outgoing = (method: string) => request(method, createBranch(), { via: ME });

function clientUser() {
  const responses: number[] = [];
  const failures: TransactionFailure[] = [];
  return { responses, failures, user: { response: (r: SipResponse) => responses.push(r.status), failed: (reason: TransactionFailure) => failures.push(reason) } };
}

const methods = (sent: Sent[]) => sent.map((s) => (s.message.kind === "request" ? s.message.method : s.message.status));
const times = (sent: Sent[]) => sent.map((s) => s.at);

describe("INVITE client transaction", () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    h = harness();
  });

  it("retransmits on Timer A (500, 1500, 3500 ms ...) and times out on Timer B at 32 s", () => {
    const { user, failures } = clientUser();
    h.layer.sendRequest(outgoing("INVITE"), PEER, user);
    h.clock.advance(31_999);
    expect(times(h.sent)).toEqual([0, 500, 1500, 3500, 7500, 15500, 31500]);
    expect(failures).toEqual([]);
    h.clock.advance(1);
    expect(failures).toEqual(["timeout"]);
    expect(h.layer.size).toBe(0);
    h.clock.advance(60_000);
    expect(h.sent).toHaveLength(7);
  });

  it("stops retransmitting on a provisional response and waits for the final one", () => {
    const { user, responses, failures } = clientUser();
    const invite = outgoing("INVITE");
    h.layer.sendRequest(invite, PEER, user);
    h.clock.advance(600);
    h.receive(buildResponse(invite, 100, "Trying"));
    h.receive(buildResponse(invite, 180, "Ringing", { toTag: "to1" }));
    h.clock.advance(60_000);
    expect(times(h.sent)).toEqual([0, 500]);
    expect(responses).toEqual([100, 180]);
    expect(failures).toEqual([]);
  });

  it("acknowledges a 486 itself, re-sends that ACK for retransmissions, and ends after Timer D", () => {
    const { user, responses } = clientUser();
    const invite = outgoing("INVITE");
    invite.headers.append("Route", "<sip:proxy.example.com;lr>");
    h.layer.sendRequest(invite, PEER, user);
    const busy = buildResponse(invite, 486, "Busy Here", { toTag: "to1" });
    h.receive(busy);
    expect(responses).toEqual([486]);
    const ack = h.sent[1]!.message as SipRequest;
    expect(ack).toMatchObject({ kind: "request", method: "ACK", uri: invite.uri });
    expect(h.sent[1]!.to).toBe("10.0.0.9:5061");
    expect(getTopVia(ack).params.branch).toBe(getTopVia(invite).params.branch);
    expect(getCSeq(ack)).toEqual({ seq: 1, method: "ACK" });
    expect(getTo(ack).params.tag).toBe("to1");
    expect(ack.headers.getAll("Route")).toEqual(["<sip:proxy.example.com;lr>"]);

    h.clock.advance(1000);
    h.receive(busy);
    expect(methods(h.sent)).toEqual(["INVITE", "ACK", "ACK"]);
    expect(responses).toEqual([486]);

    h.clock.advance(32_000);
    expect(h.layer.size).toBe(0);
    h.receive(busy);
    expect(h.stray.map((r) => r.status)).toEqual([486]);
  });

  it("ends on a 2xx without acknowledging it, so retransmitted 2xx reach the TU as stray responses", () => {
    const { user, responses } = clientUser();
    const invite = outgoing("INVITE");
    h.layer.sendRequest(invite, PEER, user);
    const ok = buildResponse(invite, 200, "OK", { toTag: "to1" });
    h.receive(ok);
    h.receive(ok);
    expect(responses).toEqual([200]);
    expect(h.stray.map((r) => r.status)).toEqual([200]);
    expect(methods(h.sent)).toEqual(["INVITE"]);
    expect(h.layer.size).toBe(0);
  });

  it("matches responses by branch and CSeq method: a CANCEL's 200 does not end the INVITE", () => {
    const invite = outgoing("INVITE");
    const inviteUser = clientUser();
    h.layer.sendRequest(invite, PEER, inviteUser.user);
    h.receive(buildResponse(invite, 180, "Ringing", { toTag: "to1" }));
    const cancel = { ...invite, method: "CANCEL", headers: invite.headers.clone().set("CSeq", "1 CANCEL") };
    const cancelUser = clientUser();
    h.layer.sendRequest(cancel, PEER, cancelUser.user);
    h.receive(buildResponse(cancel, 200, "OK", { toTag: "to1" }));
    h.receive(buildResponse(invite, 487, "Request Terminated", { toTag: "to1" }));
    expect(cancelUser.responses).toEqual([200]);
    expect(inviteUser.responses).toEqual([180, 487]);
    expect(methods(h.sent)).toEqual(["INVITE", "CANCEL", "ACK"]);
  });

  it("reports a transport error, thrown or rejected, and ends the transaction", async () => {
    const thrown = harness(() => {
      throw new Error("EHOSTUNREACH");
    });
    const a = clientUser();
    thrown.layer.sendRequest(outgoing("INVITE"), PEER, a.user);
    expect(a.failures).toEqual(["transport_error"]);
    expect(thrown.layer.size).toBe(0);
    expect(thrown.clock.pendingTimers).toBe(0);

    const rejected = harness(() => Promise.reject(new Error("ENETDOWN")));
    const b = clientUser();
    rejected.layer.sendRequest(outgoing("OPTIONS"), PEER, b.user);
    await Promise.resolve();
    await Promise.resolve();
    expect(b.failures).toEqual(["transport_error"]);
    expect(rejected.layer.size).toBe(0);
  });

  it("refuses requests it cannot match: no magic-cookie branch, a reused branch, an ACK", () => {
    const { user } = clientUser();
    const old = request("OPTIONS", "oldstyle", { via: ME });
    expect(() => h.layer.sendRequest(old, PEER, user)).toThrow(/z9hG4bK/);
    const options = outgoing("OPTIONS");
    h.layer.sendRequest(options, PEER, user);
    expect(() => h.layer.sendRequest(options, PEER, user)).toThrow(/already/);
    expect(() => h.layer.sendRequest(outgoing("ACK"), PEER, user)).toThrow(/sendStateless/);
  });
});

describe("non-INVITE client transaction", () => {
  it("retransmits on Timer E capped at T2 and times out on Timer F at 32 s", () => {
    const h = harness();
    const { user, failures } = clientUser();
    h.layer.sendRequest(outgoing("OPTIONS"), PEER, user);
    h.clock.advance(32_000);
    expect(times(h.sent)).toEqual([0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    expect(failures).toEqual(["timeout"]);
    expect(h.layer.size).toBe(0);
  });

  it("retransmits every T2 once a provisional came, absorbs the final's retransmissions until Timer K", () => {
    const h = harness();
    const { user, responses } = clientUser();
    const bye = outgoing("BYE");
    h.layer.sendRequest(bye, PEER, user);
    h.clock.advance(600);
    h.receive(buildResponse(bye, 100, "Trying"));
    h.clock.advance(8000);
    expect(times(h.sent)).toEqual([0, 500, 1500, 5500]); // the timer armed while Trying still fires, then every T2
    const ok = buildResponse(bye, 200, "OK");
    h.receive(ok);
    h.receive(ok);
    expect(responses).toEqual([100, 200]);
    h.clock.advance(4999);
    h.receive(ok);
    expect(responses).toEqual([100, 200]);
    expect(h.stray).toEqual([]);
    h.clock.advance(1);
    h.receive(ok);
    expect(h.stray).toHaveLength(1);
    expect(h.sent).toHaveLength(4);
  });
});

describe("INVITE server transaction", () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    h = harness();
  });

  it("hands a new INVITE to the TU once, sends 100 Trying when the TU is slow, and re-sends the latest provisional for retransmissions", () => {
    const invite = request("INVITE", "z9hG4bKinv1");
    h.receive(invite);
    expect(h.requests).toHaveLength(1);
    expect(h.requests[0]!.transaction?.kind).toBe("invite-server");
    h.clock.advance(199);
    expect(h.sent).toEqual([]);
    h.clock.advance(1);
    expect(methods(h.sent)).toEqual([100]);
    expect(getTo(h.sent[0]!.message).params.tag).toBeUndefined();

    h.receive(invite);
    expect(methods(h.sent)).toEqual([100, 100]);
    h.requests[0]!.transaction!.respond(buildResponse(h.requests[0]!.request, 180, "Ringing", { toTag: "as1" }));
    h.receive(invite);
    expect(methods(h.sent)).toEqual([100, 100, 180, 180]);
    expect(h.requests).toHaveLength(1);
  });

  it("sends no 100 Trying when the TU answers within 200 ms", () => {
    h.receive(request("INVITE", "z9hG4bKinv2"));
    h.clock.advance(50);
    h.requests[0]!.transaction!.respond(buildResponse(h.requests[0]!.request, 180, "Ringing", { toTag: "as1" }));
    h.clock.advance(1000);
    expect(methods(h.sent)).toEqual([180]);
  });

  it("re-sends a final non-2xx on Timer G until Timer H, then reports the missing ACK", () => {
    h.receive(request("INVITE", "z9hG4bKinv3"));
    const { transaction, request: invite } = h.requests[0]!;
    expect(transaction!.respond(buildResponse(invite, 486, "Busy Here", { toTag: "as1" }))).toBe(true);
    expect(transaction!.respond(buildResponse(invite, 200, "OK", { toTag: "as1" }))).toBe(false);
    h.receive(invite);
    h.clock.advance(31_999);
    expect(times(h.sent.filter((s) => s.at > 0))).toEqual([500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    expect(methods(h.sent).every((m) => m === 486)).toBe(true);
    expect(h.sent).toHaveLength(12); // the first send, one for the retransmitted INVITE, ten on Timer G
    expect(h.serverFailures).toEqual([]);
    h.clock.advance(1);
    expect(h.serverFailures).toEqual([{ transaction, reason: "timeout" }]);
    expect(h.layer.size).toBe(0);
  });

  it("stops re-sending on the ACK, absorbs it and its retransmissions, and ends after Timer I", () => {
    h.receive(request("INVITE", "z9hG4bKinv4"));
    const { transaction, request: invite } = h.requests[0]!;
    transaction!.respond(buildResponse(invite, 603, "Decline", { toTag: "as1" }));
    h.clock.advance(600);
    const ack = request("ACK", "z9hG4bKinv4", { cseq: "1 ACK", toTag: "as1" });
    h.receive(ack);
    expect(transaction!.state).toBe("confirmed");
    h.receive(ack);
    h.clock.advance(4999);
    expect(times(h.sent)).toEqual([0, 500]);
    expect(h.requests).toHaveLength(1);
    h.clock.advance(1);
    expect(transaction!.state).toBe("terminated");
    expect(h.layer.size).toBe(0);
    expect(h.serverFailures).toEqual([]);
  });

  it("after a 2xx, absorbs retransmitted INVITEs, sends the TU's 2xx retransmissions, and passes the ACK to the TU", () => {
    const invite = request("INVITE", "z9hG4bKinv5");
    h.receive(invite);
    const { transaction } = h.requests[0]!;
    const ok = buildResponse(invite, 200, "OK", { toTag: "as1" });
    transaction!.respond(ok);
    expect(transaction!.state).toBe("accepted");
    h.receive(invite);
    h.clock.advance(500);
    expect(methods(h.sent)).toEqual([200]); // the transaction does not retransmit a 2xx on its own
    expect(transaction!.respond(ok)).toBe(true); // the TU's retransmission (RFC 3261 13.3.1.4)
    expect(methods(h.sent)).toEqual([200, 200]);
    h.receive(request("ACK", "z9hG4bKack5", { cseq: "1 ACK", toTag: "as1" }));
    // An ACK reusing the INVITE's branch matches the transaction, which passes it up too (RFC 6026).
    h.receive(request("ACK", "z9hG4bKinv5", { cseq: "1 ACK", toTag: "as1" }));
    expect(h.requests.map((r) => [r.request.method, r.transaction])).toEqual([
      ["INVITE", transaction],
      ["ACK", null],
      ["ACK", null],
    ]);
    h.clock.advance(31_500);
    expect(h.layer.size).toBe(0);
    expect(h.serverFailures).toEqual([]);
  });

  it("matches a CANCEL to its INVITE (RFC 3261 9.2) and absorbs the ACK for the 487", () => {
    const invite = request("INVITE", "z9hG4bKinv6");
    h.receive(invite);
    const inviteTransaction = h.requests[0]!.transaction!;
    inviteTransaction.respond(buildResponse(invite, 180, "Ringing", { toTag: "as1" }));
    h.receive(request("CANCEL", "z9hG4bKinv6", { cseq: "1 CANCEL" }));
    const cancel = h.requests[1]!;
    expect(cancel.request.method).toBe("CANCEL");
    expect(cancel.cancels).toBe(inviteTransaction);
    expect(cancel.transaction).not.toBe(inviteTransaction);
    cancel.transaction!.respond(buildResponse(cancel.request, 200, "OK", { toTag: "as1" }));
    inviteTransaction.respond(buildResponse(invite, 487, "Request Terminated", { toTag: "as1" }));
    h.receive(request("ACK", "z9hG4bKinv6", { cseq: "1 ACK", toTag: "as1" }));
    expect(methods(h.sent)).toEqual([180, 200, 487]);
    expect(getCSeq(h.sent[1]!.message).method).toBe("CANCEL");
    expect(h.requests).toHaveLength(2);

    h.receive(request("CANCEL", "z9hG4bKother", { cseq: "1 CANCEL" }));
    expect(h.requests[2]!.cancels).toBeUndefined();
  });

  it("does not match a request with the same branch from another sent-by", () => {
    h.receive(request("INVITE", "z9hG4bKsame"));
    h.receive(request("INVITE", "z9hG4bKsame", { via: "10.0.0.77:5061" }), { address: "10.0.0.77", port: 5061 });
    expect(h.requests).toHaveLength(2);
  });

  it("matches retransmissions from RFC 2543 peers (no magic cookie) by Call-ID, CSeq and From tag", () => {
    const invite = request("INVITE", "oldbranch");
    h.receive(invite);
    h.receive(invite);
    expect(h.requests).toHaveLength(1);
  });

  it("sends responses to the source address with received and rport (RFC 3581)", () => {
    h.receive(request("INVITE", "z9hG4bKnat", { via: "192.168.1.20:5062;rport" }), { address: "203.0.113.7", port: 41000 });
    h.clock.advance(200);
    expect(h.sent[0]!.to).toBe("203.0.113.7:41000");
    expect(getTopVia(h.sent[0]!.message).params).toEqual({ branch: "z9hG4bKnat", rport: "41000", received: "203.0.113.7" });

    h.receive(request("OPTIONS", "z9hG4bKnorport", { via: "gateway.example.com:5070" }), { address: "198.51.100.2", port: 5070 });
    h.requests[1]!.transaction!.respond(buildResponse(h.requests[1]!.request, 200, "OK"));
    expect(h.sent[1]!.to).toBe("198.51.100.2:5070");
  });

  it("reports a transport error while responding", () => {
    const failing = harness(() => {
      throw new Error("EPERM");
    });
    failing.receive(request("INVITE", "z9hG4bKerr"));
    const { transaction, request: invite } = failing.requests[0]!;
    transaction!.respond(buildResponse(invite, 486, "Busy Here", { toTag: "x" }));
    expect(failing.serverFailures).toEqual([{ transaction, reason: "transport_error" }]);
    expect(failing.layer.size).toBe(0);
  });
});

describe("non-INVITE server transaction", () => {
  it("absorbs retransmissions (silently while Trying, re-sending the response after) until Timer J", () => {
    const h = harness();
    const bye = request("BYE", "z9hG4bKbye1", { cseq: "2 BYE", toTag: "as1" });
    h.receive(bye);
    h.receive(bye);
    expect(h.requests).toHaveLength(1);
    expect(h.sent).toEqual([]);
    const { transaction } = h.requests[0]!;
    expect(transaction!.respond(buildResponse(bye, 200, "OK"))).toBe(true);
    expect(transaction!.respond(buildResponse(bye, 500, "Oops"))).toBe(false);
    h.receive(bye);
    expect(methods(h.sent)).toEqual([200, 200]);
    expect(h.requests).toHaveLength(1);
    h.clock.advance(31_999);
    h.receive(bye);
    expect(h.requests).toHaveLength(1);
    h.clock.advance(1);
    expect(h.layer.size).toBe(0);
    h.receive(bye);
    expect(h.requests).toHaveLength(2); // Timer J is over: the same bytes are a new request now
  });
});

describe("TransactionLayer.receive", () => {
  it("reports malformed datagrams without throwing and ignores CRLF keep-alives", () => {
    const h = harness();
    expect(() => h.receive("INVITE nonsense\r\n\r\n")).not.toThrow();
    h.receive("\r\n\r\n");
    expect(h.malformed).toHaveLength(1);
    expect(h.malformed[0]).toBeInstanceOf(SipParseError);
    expect(h.requests).toEqual([]);
  });

  it("replaces a received= and a valued rport= the sender wrote: responses go to the real source", () => {
    const h = harness();
    h.receive(request("OPTIONS", "z9hG4bKr1", { via: "10.0.0.9:5061;received=198.51.100.66" }));
    h.receive(request("OPTIONS", "z9hG4bKr2", { via: "10.0.0.9:5061;rport=9" }));
    h.receive(request("OPTIONS", "z9hG4bKr3", { via: "10.0.0.9:5061;received=198.51.100.66" }), { address: "203.0.113.7", port: 41000 });
    for (const { transaction, request: options } of h.requests) transaction!.respond(buildResponse(options, 200, "OK"));
    expect(h.sent.map((s) => s.to)).toEqual(["10.0.0.9:5061", "10.0.0.9:5061", "203.0.113.7:5061"]);
    expect(h.sent.map((s) => getTopVia(s.message).params)).toEqual([
      { branch: "z9hG4bKr1" },
      { branch: "z9hG4bKr2", rport: "5061" },
      { branch: "z9hG4bKr3", received: "203.0.113.7" },
    ]);
  });

  it("answers a screened-out request once, statelessly, with a To tag, and never with more bytes than it came in", () => {
    const h = harness(undefined, { screen: () => ({ status: 403, reason: "Forbidden" }) });
    const invite = request("INVITE", "z9hG4bKscreen", { cseq: "1 INVITE" });
    h.receive(invite);
    h.receive(invite); // a retransmission is a new request to screen: one answer each
    h.clock.advance(64 * 500);
    expect(methods(h.sent)).toEqual([403, 403]);
    expect(getTo(h.sent[0]!.message).params.tag).toMatch(/^[0-9a-f]{16}$/);
    expect(getTo(h.sent[1]!.message).params.tag).toBe(getTo(h.sent[0]!.message).params.tag);
    expect(h.requests).toEqual([]);
    expect(h.layer.size).toBe(0);
    // Compact headers and no Content-Length: the 403 would be larger than the request, so none is sent.
    h.receive("OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/UDP 10.0.0.9;branch=z9hG4bKc\r\nf: <sip:b>;tag=1\r\nt: <sip:a>\r\ni: c\r\nCSeq: 1 OPTIONS\r\n\r\n");
    expect(h.sent).toHaveLength(2);
    // ACKs are never answered, screened or not.
    h.receive(request("ACK", "z9hG4bKscreenack", { cseq: "1 ACK", toTag: "x" }));
    expect(h.sent).toHaveLength(2);
  });

  it("past maxServerTransactions, a new request gets a stateless 503 with Retry-After; retransmissions still reach their transactions", () => {
    const h = harness(undefined, { maxServerTransactions: 2 });
    // As long as real requests are: a stateless answer is never larger than its request.
    const full = (method: string, branch: string) => {
      const r = request(method, branch);
      r.headers.append("User-Agent", "a peer whose requests carry the usual headers");
      return r;
    };
    const first = full("INVITE", "z9hG4bKfull1");
    h.receive(first);
    h.receive(full("OPTIONS", "z9hG4bKfull2"));
    h.receive(full("OPTIONS", "z9hG4bKfull3"));
    expect(h.requests).toHaveLength(2);
    expect(methods(h.sent)).toEqual([503]);
    expect(h.sent[0]!.message.headers.get("Retry-After")).toBe("5");
    h.receive(first); // the retransmission gets its transaction's 100 Trying
    expect(methods(h.sent)).toEqual([503, 100]);
    expect(h.layer.size).toBe(2);
  });

  it("close() ends every transaction and its timers", () => {
    const h = harness();
    h.layer.sendRequest(outgoing("INVITE"), PEER, clientUser().user);
    h.receive(request("INVITE", "z9hG4bKc"));
    h.layer.close();
    expect(h.layer.size).toBe(0);
    expect(h.clock.pendingTimers).toBe(0);
  });
});
