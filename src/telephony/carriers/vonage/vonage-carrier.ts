import type { Logger } from "pino";
import type { Carrier, DialResult } from "../../carrier.js";
import type { CarrierStreamTokens } from "../../../services/carrier-stream-tokens.js";
import type { UnansweredOutcome } from "../../../services/call-lifecycle.js";
import type { PendingDials } from "../../pending-dials.js";
import type { CarrierCallControl } from "../../carrier-call-control.js";
import { dialThroughApi } from "../api-dial.js";
import type { VonageApi } from "./vonage-api.js";
import { connectWebsocketNcco, transferNcco } from "./ncco.js";

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

/** A dial in flight: its call's UUID at Vonage once known, and final events (by UUID) that came before it was. */
interface Dialling {
  uuid: string | undefined;
  early: Map<string, string>;
}
/** Final events kept for a dial whose UUID is not yet known (there is one real one). */
const MAX_EARLY_EVENTS = 4;

/**
 * Outbound calls through Vonage's Voice API (a number whose carrier is `vonage`): the call is
 * created with an NCCO that connects its audio to `/media/vonage` with a single-use stream token
 * in the endpoint's headers, and an event URL (`/carriers/vonage/events?call_id=...`, signed by
 * Vonage) that tells busy, no answer and failure. The dial waits for the first of the stream
 * (answered) or a final event (dialThroughApi); aborting it hangs the call up at Vonage.
 */
export class VonageCarrier implements Carrier {
  readonly name = "vonage";
  private readonly dialling = new Map<string, Dialling>();

  constructor(private readonly options: VonageCarrierOptions) {}

  async dial(call: { id: string; accountId: string; to: string; from: string | null }, signal: AbortSignal): Promise<DialResult> {
    const { api, tokens, dials, baseUrl, ringTimeoutMs, logger } = this.options;
    const from = call.from;
    if (!from) return { outcome: "failed", reason: "a call through Vonage needs a from_number (one of the application's Vonage numbers)" };
    const state: Dialling = { uuid: undefined, early: new Map() };
    this.dialling.set(call.id, state);
    try {
      return await dialThroughApi(
        {
          carrier: "vonage",
          call: { ...call, from },
          tokens,
          dials,
          ringTimeoutMs,
          logger,
          place: async (token) => {
            const created = await api.createCall({
              to: call.to,
              from,
              ncco: connectWebsocketNcco(`${websocketBase(baseUrl)}${VONAGE_PATHS.media}`, { stream_token: token }),
              eventUrl: `${baseUrl}${VONAGE_PATHS.events}?call_id=${encodeURIComponent(call.id)}`,
              ringingTimerSeconds: Math.ceil(ringTimeoutMs / 1000),
            });
            state.uuid = created.uuid;
            const early = state.early.get(created.uuid);
            if (early) this.finish(call.id, early);
            return created.uuid;
          },
          // A hang-up before the answer is Vonage's cancel.
          cancel: (uuid) => api.hangUp(uuid),
        },
        signal,
      );
    } finally {
      this.dialling.delete(call.id);
    }
  }

  /**
   * An event for `callId` about Vonage's call `uuid`: a final status ends its dial (an answered
   * call's stream ends the dial itself). Only an event about the dial's own call counts: the
   * signed token binds the body, not the URL's `call_id`, so a signed event of one call sent
   * with another's `call_id` must not end that one.
   */
  statusChanged(callId: string, uuid: string, status: string): void {
    const state = this.dialling.get(callId);
    if (!state || !UNANSWERED[status]) return;
    // An event that outran createCall's answer is kept until the call's UUID is known.
    if (state.uuid !== undefined) {
      if (state.uuid === uuid) this.finish(callId, status);
    } else if (state.early.size < MAX_EARLY_EVENTS && !state.early.has(uuid)) state.early.set(uuid, status);
  }

  /** Control of the Vonage call `uuid` through the API: hang-up and transfer. */
  control(uuid: string): CarrierCallControl {
    const { api } = this.options;
    return {
      hangUp: () => api.hangUp(uuid),
      transfer: async (target) => api.transfer(uuid, transferNcco(target)),
    };
  }

  private finish(callId: string, status: string): void {
    const outcome = UNANSWERED[status];
    if (outcome) this.options.dials.deliverOutcome(callId, outcome, `Vonage: ${status}`);
  }
}

/** The WebSocket origin of an http(s) base URL. */
export function websocketBase(baseUrl: string): string {
  return baseUrl.replace(/^http/, "ws").replace(/\/+$/, "");
}
