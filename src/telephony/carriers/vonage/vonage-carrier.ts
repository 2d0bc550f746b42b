import type { Logger } from "pino";
import type { Carrier, DialResult } from "../../carrier.js";
import type { CarrierStreamTokens } from "../../../services/carrier-stream-tokens.js";
import type { UnansweredOutcome } from "../../../services/call-lifecycle.js";
import type { PendingDials } from "../../pending-dials.js";
import type { CarrierCallControl } from "../../carrier-call-control.js";
import { dialThroughApi } from "../api-dial.js";
import type { VonageApi } from "./vonage-api.js";
import { connectWebsocketNcco, transferNcco } from "./ncco.js";
import { websocketBase } from "../public-url.js";

/** Vonage's call statuses that end a dial, and what each comes to (`completed` before the stream connected: something failed). */
const UNANSWERED: Readonly<Record<string, UnansweredOutcome>> = {
  busy: "busy",
  rejected: "busy",
  timeout: "no_answer",
  unanswered: "no_answer",
  cancelled: "no_answer",
  failed: "failed",
  completed: "failed",
};

/** Paths Vonage is pointed at (relative to PARLEY_BASE_URL). */
export const VONAGE_PATHS = { answer: "/carriers/vonage/answer", events: "/carriers/vonage/events", media: "/media/vonage" } as const;

export interface VonageCarrierOptions {
  api: VonageApi;
  tokens: CarrierStreamTokens;
  dials: PendingDials;
  /** PARLEY_BASE_URL: where Vonage reaches Parley (https). */
  baseUrl: string;
  ringTimeoutMs: number;
  logger: Logger;
}

/**
 * Outbound calls through Vonage's Voice API (a number whose carrier is `vonage`): the call is
 * created with an NCCO that connects its audio to `/media/vonage` with a single-use stream token
 * in the endpoint's headers, and an event URL (`/carriers/vonage/events?call_id=...`, signed by
 * Vonage) that tells busy, no answer and failure. The dial waits for the first of the stream
 * (answered) or a final event (dialThroughApi); aborting it hangs the call up at Vonage.
 */
export class VonageCarrier implements Carrier {
  readonly name = "vonage";

  constructor(private readonly options: VonageCarrierOptions) {}

  dial(call: { id: string; accountId: string; to: string; from: string | null }, signal: AbortSignal): Promise<DialResult> {
    const { api, tokens, dials, baseUrl, ringTimeoutMs, logger } = this.options;
    const from = call.from;
    if (!from) return Promise.resolve({ outcome: "failed", reason: "a call through Vonage needs a from_number (one of the application's Vonage numbers)" });
    return dialThroughApi(
      {
        carrier: "vonage",
        call: { ...call, from },
        tokens,
        dials,
        ringTimeoutMs,
        logger,
        place: async (token) =>
          (
            await api.createCall({
              to: call.to,
              from,
              ncco: connectWebsocketNcco(`${websocketBase(baseUrl)}${VONAGE_PATHS.media}`, { stream_token: token }),
              eventUrl: `${baseUrl}${VONAGE_PATHS.events}?call_id=${encodeURIComponent(call.id)}`,
              ringingTimerSeconds: Math.ceil(ringTimeoutMs / 1000),
            })
          ).uuid,
        // A hang-up before the answer is Vonage's cancel.
        cancel: (uuid) => api.hangUp(uuid),
      },
      signal,
    );
  }

  /**
   * An event for `callId` about Vonage's call `uuid`: a final status ends its dial (an answered
   * call's stream ends the dial itself); about another call, nothing (see PendingDials).
   */
  statusChanged(callId: string, uuid: string, status: string): void {
    const outcome = UNANSWERED[status];
    if (outcome) this.options.dials.deliverOutcome(callId, uuid, outcome, `Vonage: ${status}`);
  }

  /** Control of the Vonage call `uuid` through the API: hang-up and transfer. */
  control(uuid: string): CarrierCallControl {
    const { api } = this.options;
    return {
      hangUp: () => api.hangUp(uuid),
      transfer: async (target) => api.transfer(uuid, transferNcco(target)),
    };
  }
}
