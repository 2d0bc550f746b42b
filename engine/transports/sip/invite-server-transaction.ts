import { buildResponse, serializeSipMessage, type SipRequest, type SipResponse } from "./sip-message.js";
import { Transaction, type SipAddress, type TransactionContext, type TransactionFailure } from "./transaction.js";

/**
 * INVITE server transaction (RFC 3261 17.2.1, figure 7, with the Accepted state of RFC 6026)
 * over UDP.
 *
 * Proceeding: the TU's provisional responses are sent and the latest is re-sent for each
 * retransmitted INVITE; if the TU has sent nothing after `tryingDelay` (200 ms), a 100 Trying
 * goes out on its behalf.
 * A 300-699 moves to Completed: Timer G re-sends it (T1 doubling up to T2) until the ACK
 * arrives; Timer H (64*T1) without an ACK is a timeout reported to the TU. The ACK moves to
 * Confirmed, where Timer I (T4) absorbs ACK retransmissions.
 * A 2xx moves to Accepted for Timer L (64*T1). Retransmitting a 2xx until its ACK arrives is the
 * TU's job (RFC 3261 13.3.1.4), not this transaction's: the TU passes each retransmission to
 * `respond`, which sends it while Accepted. Retransmitted INVITEs are absorbed meanwhile, so the
 * TU never sees the same INVITE twice; an ACK that matches (a 2xx's ACK normally has its own
 * branch and matches nothing) is handed to the TU.
 */
export class InviteServerTransaction extends Transaction {
  readonly kind = "invite-server";
  private provisional: Buffer | undefined;
  private final: Buffer | undefined;
  private interval = 0;

  constructor(
    id: string,
    readonly request: SipRequest,
    /** Where responses go (RFC 3261 18.2.2, with `received` and `rport`). */
    readonly responseDestination: SipAddress,
    private readonly report: (reason: TransactionFailure, error?: unknown) => void,
    context: TransactionContext,
  ) {
    super(id, "proceeding", context);
  }

  start(): void {
    this.startTimer("trying", this.timers.tryingDelay, () => this.sendTrying());
  }

  /**
   * Sends the TU's response. False when this transaction can no longer send it: a final
   * response was already sent (a 2xx may be repeated while Accepted), or it has ended.
   */
  respond(response: SipResponse): boolean {
    if (this.state === "accepted" && response.status >= 200 && response.status < 300) {
      this.transmit(serializeSipMessage(response), this.responseDestination);
      return true;
    }
    if (this.state !== "proceeding") return false;
    this.stopTimer("trying");
    const datagram = serializeSipMessage(response);
    if (response.status < 200) {
      this.provisional = datagram;
    } else if (response.status < 300) {
      this.moveTo("accepted");
      this.startTimer("L", 64 * this.timers.t1, () => this.terminate());
    } else {
      this.final = datagram;
      this.moveTo("completed");
      this.interval = this.timers.t1;
      this.startTimer("G", this.interval, () => this.resendFinal());
      this.startTimer("H", 64 * this.timers.t1, () => {
        this.failed("timeout");
        this.terminate();
      });
    }
    this.transmit(datagram, this.responseDestination);
    return true;
  }

  /** A retransmitted INVITE, or an ACK, that matched this transaction. False when the TU should have it. */
  receiveRequest(request: SipRequest): boolean {
    if (request.method === "ACK") {
      if (this.state === "accepted") return false;
      if (this.state === "completed") {
        this.stopTimer("G");
        this.stopTimer("H");
        this.moveTo("confirmed");
        this.startTimer("I", this.timers.t4, () => this.terminate());
      }
      return true;
    }
    if (this.state === "proceeding") {
      if (this.provisional) this.transmit(this.provisional, this.responseDestination);
      else this.sendTrying();
    } else if (this.state === "completed" && this.final) {
      this.transmit(this.final, this.responseDestination);
    }
    return true;
  }

  protected failed(reason: TransactionFailure, error?: unknown): void {
    this.report(reason, error);
  }

  private sendTrying(): void {
    this.stopTimer("trying");
    this.provisional = serializeSipMessage(buildResponse(this.request, 100, "Trying"));
    this.transmit(this.provisional, this.responseDestination);
  }

  private resendFinal(): void {
    this.interval = Math.min(2 * this.interval, this.timers.t2);
    this.startTimer("G", this.interval, () => this.resendFinal());
    this.transmit(this.final!, this.responseDestination);
  }
}
