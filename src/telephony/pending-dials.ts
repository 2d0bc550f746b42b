import type { MediaTransport } from "../../engine/index.js";
import type { UnansweredOutcome } from "../services/call-lifecycle.js";
import type { DialResult } from "./carrier.js";

/**
 * Outbound calls placed through a carrier whose media arrives later, on a WebSocket the
 * carrier opens back to Parley (Twilio, Telnyx, Vonage): the dial waits here, by call id, for
 * the first of its stream (handed over by the media endpoint) or the carrier's status callback
 * saying it was busy, not answered or failed. Whatever arrives after the first is refused.
 */
export class PendingDials {
  private readonly waiting = new Map<string, (result: DialResult) => void>();

  /** Starts waiting for the call's stream or outcome; `settle` ends the wait from the dial's side. */
  expect(callId: string): { result: Promise<DialResult>; settle: (result: DialResult) => void } {
    let settle!: (result: DialResult) => void;
    const result = new Promise<DialResult>((resolve) => {
      settle = (value) => {
        if (this.waiting.get(callId) !== settle) return;
        this.waiting.delete(callId);
        resolve(value);
      };
    });
    this.waiting.set(callId, settle);
    return { result, settle };
  }

  /** Hands the call's media stream to its dial; false when no dial of this node waits for it. */
  deliverStream(callId: string, transport: MediaTransport): boolean {
    const settle = this.waiting.get(callId);
    if (!settle) return false;
    settle({ outcome: "answered", transport });
    return true;
  }

  /** Tells the call's dial it will not connect; false when no dial of this node waits for it. */
  deliverOutcome(callId: string, outcome: UnansweredOutcome, reason: string): boolean {
    const settle = this.waiting.get(callId);
    if (!settle) return false;
    settle({ outcome, reason });
    return true;
  }
}
