import type { MediaTransport } from "../../engine/index.js";
import type { UnansweredOutcome } from "../services/call-lifecycle.js";

/** What dialling a number came to: the far end's media, or why it never connected. */
export type DialResult = { outcome: "answered"; transport: MediaTransport } | { outcome: UnansweredOutcome; reason: string };

/** Places outbound calls: the simulator, or (later) a SIP trunk. */
export interface Carrier {
  readonly name: string;
  /** Dials `to`; aborting `signal` gives up (the caller then treats the call as not answered). */
  dial(call: { id: string; to: string; from: string | null; metadata: Record<string, unknown> }, signal: AbortSignal): Promise<DialResult>;
}
