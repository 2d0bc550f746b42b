import { SipHeaders } from "./sip-headers.js";
import { getCSeq, serializeSipMessage, type SipRequest, type SipResponse } from "./sip-message.js";
import { Transaction, type ClientTransactionUser, type SipAddress, type TransactionContext, type TransactionFailure } from "./transaction.js";

/**
 * INVITE client transaction (RFC 3261 17.1.1, figure 5) over UDP.
 *
 * Calling: the INVITE is retransmitted on Timer A (T1, doubling each time, uncapped) until a
 * response arrives; Timer B (64*T1) without any response is a timeout. A provisional moves it
 * to Proceeding, where it waits for the final response with no timer of its own: ending a call
 * that rings too long is the TU's decision (CANCEL, then `terminate()`).
 * A 2xx ends the transaction at once: the TU acknowledges 2xx responses itself (13.2.2.4) and
 * receives their retransmissions as stray responses from the transaction layer. A 300-699 is
 * acknowledged here (17.1.1.3), and every retransmission of it is answered with the same ACK
 * during Timer D without reaching the TU again.
 */
export class InviteClientTransaction extends Transaction {
  readonly kind = "invite-client";
  private readonly datagram: Buffer;
  private ack: Buffer | undefined;
  private interval = 0;

  constructor(
    id: string,
    readonly request: SipRequest,
    readonly destination: SipAddress,
    private readonly user: ClientTransactionUser,
    context: TransactionContext,
  ) {
    super(id, "calling", context);
    this.datagram = serializeSipMessage(request);
  }

  start(): void {
    this.interval = this.timers.t1;
    this.startTimer("A", this.interval, () => this.retransmit());
    this.startTimer("B", 64 * this.timers.t1, () => this.fail("timeout"));
    this.transmit(this.datagram, this.destination);
  }

  /** A response the layer matched to this transaction. */
  receiveResponse(response: SipResponse, source: SipAddress): void {
    if (this.state === "completed") {
      if (response.status >= 300 && this.ack) this.transmit(this.ack, this.destination);
      return;
    }
    if (this.state !== "calling" && this.state !== "proceeding") return;
    this.stopTimer("A");
    this.stopTimer("B");
    if (response.status < 200) {
      this.moveTo("proceeding");
    } else if (response.status < 300) {
      this.terminate();
    } else {
      this.ack = serializeSipMessage(buildAck(this.request, response));
      this.moveTo("completed");
      this.startTimer("D", this.timers.timerD, () => this.terminate());
      this.transmit(this.ack, this.destination);
    }
    this.user.response(response, source);
  }

  protected failed(reason: TransactionFailure, error?: unknown): void {
    this.user.failed(reason, error);
  }

  private retransmit(): void {
    if (this.state !== "calling") return;
    this.interval *= 2;
    this.startTimer("A", this.interval, () => this.retransmit());
    this.transmit(this.datagram, this.destination);
  }

  private fail(reason: TransactionFailure): void {
    this.failed(reason);
    this.terminate();
  }
}

/**
 * The ACK for a 300-699 response (RFC 3261 17.1.1.3): the INVITE's Request-URI, Call-ID, From,
 * CSeq number, top Via and Route headers; the response's To (with the tag it added).
 */
export function buildAck(invite: SipRequest, response: SipResponse): SipRequest {
  const headers = new SipHeaders()
    .append("Via", invite.headers.get("Via") ?? "")
    .set("Route", ...invite.headers.getAll("Route"))
    .append("Max-Forwards", "70")
    .append("From", invite.headers.get("From") ?? "")
    .append("To", response.headers.get("To") ?? "")
    .append("Call-ID", invite.headers.get("Call-ID") ?? "")
    .append("CSeq", `${getCSeq(invite).seq} ACK`);
  return { kind: "request", method: "ACK", uri: invite.uri, headers, body: Buffer.alloc(0) };
}
