import { serializeSipMessage, type SipRequest, type SipResponse } from "./sip-message.js";
import { Transaction, type ClientTransactionUser, type SipAddress, type TransactionContext, type TransactionFailure } from "./transaction.js";

/**
 * Non-INVITE client transaction (RFC 3261 17.1.2, figure 6) over UDP: BYE, CANCEL, OPTIONS,
 * REFER, ... The request is retransmitted on Timer E (T1 doubling up to T2 while Trying, every
 * T2 once a provisional came); Timer F (64*T1) without a final response is a timeout. After the
 * final response, Timer K (T4) absorbs its retransmissions.
 */
export class NonInviteClientTransaction extends Transaction {
  readonly kind = "non-invite-client";
  private readonly datagram: Buffer;
  private interval = 0;

  constructor(
    id: string,
    readonly request: SipRequest,
    readonly destination: SipAddress,
    private readonly user: ClientTransactionUser,
    context: TransactionContext,
  ) {
    super(id, "trying", context);
    this.datagram = serializeSipMessage(request);
  }

  start(): void {
    this.interval = this.timers.t1;
    this.startTimer("E", this.interval, () => this.retransmit());
    this.startTimer("F", 64 * this.timers.t1, () => {
      this.failed("timeout");
      this.terminate();
    });
    this.transmit(this.datagram, this.destination);
  }

  receiveResponse(response: SipResponse, source: SipAddress): void {
    if (this.state !== "trying" && this.state !== "proceeding") return;
    if (response.status < 200) {
      this.moveTo("proceeding");
    } else {
      this.stopTimer("E");
      this.stopTimer("F");
      this.moveTo("completed");
      this.startTimer("K", this.timers.t4, () => this.terminate());
    }
    this.user.response(response, source);
  }

  protected failed(reason: TransactionFailure, error?: unknown): void {
    this.user.failed(reason, error);
  }

  private retransmit(): void {
    this.interval = this.state === "trying" ? Math.min(2 * this.interval, this.timers.t2) : this.timers.t2;
    this.startTimer("E", this.interval, () => this.retransmit());
    this.transmit(this.datagram, this.destination);
  }
}
