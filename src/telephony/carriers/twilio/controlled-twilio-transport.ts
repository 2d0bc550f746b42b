import type { WebSocket } from "ws";
import { TwilioTransport, type CallEvent } from "../../../../engine/index.js";

/** What Parley can do to a live call at its carrier, besides its media. */
export interface CarrierCallControl {
  /** Ends the call at the carrier. */
  hangUp(): Promise<void>;
  /** Redirects the call to `target` (the stream ends as the carrier takes it there). */
  transfer(target: string): Promise<void>;
}

/**
 * A Twilio media stream whose call Parley also controls through Twilio's REST API (streams
 * opened with a carrier stream token: calls Parley placed, or answered from its voice
 * webhook). Closing it from Parley's side ends the call at Twilio too, not only the stream; a
 * transfer redirects the call to a `<Dial>` first, and the stream is closed only once Twilio
 * has been asked (closing it first would end the call before the redirect). Streams from
 * hand-written TwiML have no control: closing them ends the stream, and Twilio goes on with
 * the TwiML after `<Connect>`.
 */
export class ControlledTwilioTransport extends TwilioTransport {
  private control: CarrierCallControl | undefined;
  private transferring: Promise<void> | undefined;

  constructor(
    socket: WebSocket,
    private readonly onControlError: (err: unknown) => void,
  ) {
    super(socket);
  }

  controlWith(control: CarrierCallControl): void {
    this.control = control;
  }

  /** Of the call's events, the carrier is told of the hand-off of a transfer (as SIP sends a REFER). */
  override sendEvent(event: CallEvent): void {
    if (event.type !== "transfer" || !event.number || !this.control || this.closed) return;
    this.transferring ??= this.control.transfer(event.number).catch((err: unknown) => this.onControlError(err));
  }

  override close(reason: string, code = 1000): void {
    if (this.transferring) {
      void this.transferring.finally(() => super.close(reason, code));
      return;
    }
    // Closed already when the far end hung up (Twilio's `stop`): nothing to end at Twilio then.
    const open = !this.closed;
    super.close(reason, code);
    if (open && this.control) void this.control.hangUp().catch((err: unknown) => this.onControlError(err));
  }
}
