import type { MediaTransport } from "../../engine/index.js";
import type { UnansweredOutcome } from "../services/call-lifecycle.js";
import type { DialResult } from "./carrier.js";

/** Outcomes kept for a dial whose carrier call id is not known yet (a webhook that outran the API's answer). */
const MAX_EARLY_OUTCOMES = 4;

interface Waiting {
  settle: (result: DialResult) => void;
  /** The carrier's id of the call once placed: only outcomes about it count. */
  carrierCallId: string | undefined;
  early: Map<string, { outcome: UnansweredOutcome; reason: string }>;
}

/**
 * Outbound calls placed through a carrier whose media arrives later, on a WebSocket the
 * carrier opens back to Parley (Twilio, Telnyx, Vonage): the dial waits here, by call id, for
 * the first of its stream (handed over by the media endpoint) or the carrier's webhook saying it
 * was busy, not answered or failed. Whatever arrives after the first is refused. An outcome
 * counts only for the carrier call the dial placed: some carriers sign a webhook's body but not
 * its URL, where the call id is, so a signed webhook of one call sent with another's call id
 * must not end that one.
 */
export class PendingDials {
  private readonly waiting = new Map<string, Waiting>();

  /**
   * Starts waiting for the call's stream or outcome; `settle` ends the wait from the dial's side,
   * `placed` says which carrier call the dial is.
   */
  expect(callId: string): { result: Promise<DialResult>; settle: (result: DialResult) => void; placed: (carrierCallId: string) => void } {
    let entry!: Waiting;
    const result = new Promise<DialResult>((resolve) => {
      entry = {
        settle: (value) => {
          if (this.waiting.get(callId) !== entry) return;
          this.waiting.delete(callId);
          resolve(value);
        },
        carrierCallId: undefined,
        early: new Map(),
      };
    });
    this.waiting.set(callId, entry);
    const placed = (carrierCallId: string) => {
      entry.carrierCallId = carrierCallId;
      const early = entry.early.get(carrierCallId);
      entry.early.clear();
      if (early) entry.settle(early);
    };
    return { result, settle: entry.settle, placed };
  }

  /** Hands the call's media stream to its dial; false when no dial of this node waits for it. */
  deliverStream(callId: string, transport: MediaTransport): boolean {
    const entry = this.waiting.get(callId);
    if (!entry) return false;
    entry.settle({ outcome: "answered", transport });
    return true;
  }

  /** Tells the dial of `callId` that carrier call `carrierCallId` will not connect; ignored for another carrier call. */
  deliverOutcome(callId: string, carrierCallId: string, outcome: UnansweredOutcome, reason: string): void {
    const entry = this.waiting.get(callId);
    if (!entry) return;
    if (entry.carrierCallId === undefined) {
      if (entry.early.size < MAX_EARLY_OUTCOMES) entry.early.set(carrierCallId, { outcome, reason });
      return;
    }
    if (entry.carrierCallId === carrierCallId) entry.settle({ outcome, reason });
  }
}
