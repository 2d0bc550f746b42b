import { serializeSipMessage, type SipRequest, type SipResponse } from "./sip-message.js";
import { Transaction, type SipAddress, type TransactionContext, type TransactionFailure } from "./transaction.js";

/**
 * Non-INVITE server transaction (RFC 3261 17.2.2, figure 8) over UDP. Retransmitted requests
 * are absorbed: nothing is sent while Trying, the latest provisional is re-sent while
 * Proceeding, the final response while Completed. Timer J (64*T1) keeps the Completed state
 * long enough to see every retransmission of the request.
 */
export class NonInviteServerTransaction extends Transaction {
  readonly kind = "non-invite-server";
  private last: Buffer | undefined;

  constructor(
    id: string,
    readonly request: SipRequest,
    /** Where responses go (RFC 3261 18.2.2, with `received` and `rport`). */
    readonly responseDestination: SipAddress,
    private readonly report: (reason: TransactionFailure, error?: unknown) => void,
    context: TransactionContext,
  ) {
    super(id, "trying", context);
  }

  start(): void {}

  /** Sends the TU's response; false once a final response was sent (or the transaction ended). */
  respond(response: SipResponse): boolean {
    if (this.state !== "trying" && this.state !== "proceeding") return false;
    this.last = serializeSipMessage(response);
    if (response.status < 200) {
      this.moveTo("proceeding");
    } else {
      this.moveTo("completed");
      this.startTimer("J", 64 * this.timers.t1, () => this.terminate());
    }
    this.transmit(this.last, this.responseDestination);
    return true;
  }

  /** A retransmission of the request: always absorbed. */
  receiveRequest(_request: SipRequest): boolean {
    if (this.last && (this.state === "proceeding" || this.state === "completed")) this.transmit(this.last, this.responseDestination);
    return true;
  }

  protected failed(reason: TransactionFailure, error?: unknown): void {
    this.report(reason, error);
  }
}
