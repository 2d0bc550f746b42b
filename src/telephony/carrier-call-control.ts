import type { CallEvent, MediaTransport } from "../../engine/index.js";

/** What Parley can do to a live call at its carrier, besides its media. */
export interface CarrierCallControl {
  /** Ends the call at the carrier. */
  hangUp(): Promise<void>;
  /** Redirects the call to `target` (the stream ends as the carrier takes it there). */
  transfer(target: string): Promise<void>;
}

/** A media transport whose call may also be controlled through its carrier's API. */
export interface ControllableTransport extends MediaTransport {
  controlWith(control: CarrierCallControl, onError: (err: unknown) => void): void;
}

type TransportClass = abstract new (...args: any[]) => MediaTransport;

/**
 * A carrier's media transport (Twilio's, Telnyx's, Vonage's) whose call Parley also controls
 * through the carrier's API, for streams opened with a carrier stream token (calls Parley
 * placed, or answered from the carrier's webhook). Closing it from Parley's side ends the call
 * at the carrier too, not only the stream; a transfer (the session's `transfer` event) redirects
 * the call first, and the stream is closed only once the carrier has been asked (closing it
 * first could end the call before the redirect). Without a control (a stream from TwiML written
 * by hand) it is the plain transport.
 */
export function withCarrierControl<T extends TransportClass>(Base: T) {
  abstract class Controlled extends Base implements ControllableTransport {
    private control: CarrierCallControl | undefined;
    private onControlError: (err: unknown) => void = () => {};
    private transferring: Promise<void> | undefined;

    controlWith(control: CarrierCallControl, onError: (err: unknown) => void): void {
      this.control = control;
      this.onControlError = onError;
    }

    override sendEvent(event: CallEvent): void {
      super.sendEvent(event);
      if (event.type !== "transfer" || !event.number || !this.control || this.closed) return;
      this.transferring ??= this.control.transfer(event.number).catch((err: unknown) => this.onControlError(err));
    }

    override close(reason: string): void {
      if (this.transferring) {
        void this.transferring.finally(() => super.close(reason));
        return;
      }
      // Closed already when the far end hung up (the stream's `stop`): nothing to end at the carrier then.
      const open = !this.closed;
      super.close(reason);
      if (open && this.control) void this.control.hangUp().catch((err: unknown) => this.onControlError(err));
    }
  }
  return Controlled;
}
