import type { MediaTransport } from "../../engine/index.js";
import type { UnansweredOutcome } from "../services/call-lifecycle.js";
import type { CarrierCallControl } from "./carrier-call-control.js";

/** What dialling a number came to: the far end's media, or why it never connected. */
export type DialResult = { outcome: "answered"; transport: MediaTransport } | { outcome: UnansweredOutcome; reason: string };

/** Places outbound calls: the simulator, a SIP trunk, or a carrier's API (Twilio). */
export interface Carrier {
  readonly name: string;
  /**
   * Dials `to`; aborting `signal` gives up (the caller then treats the call as not answered).
   * Carriers whose media arrives later on a WebSocket (Twilio) wait for it here (PendingDials).
   */
  dial(call: { id: string; accountId: string; to: string; from: string | null; metadata: Record<string, unknown> }, signal: AbortSignal): Promise<DialResult>;
}

/** A carrier reached through its REST API (Twilio, Telnyx, Vonage): its live calls are controlled through it too. */
export interface ApiCarrier extends Carrier {
  /** Control of the carrier's call `carrierCallId`: hang-up and transfer. */
  control(carrierCallId: string): CarrierCallControl;
}
