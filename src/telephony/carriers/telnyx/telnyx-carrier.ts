import type { Logger } from "pino";
import type { CarrierStreamTokens } from "../../../services/carrier-stream-tokens.js";
import type { Carrier, DialResult } from "../../carrier.js";
import type { CarrierCallControl } from "../../carrier-call-control.js";
import type { PendingDials } from "../../pending-dials.js";
import { dialThroughApi } from "../api-dial.js";
import { websocketBase } from "../public-url.js";
import type { TelnyxApi } from "./telnyx-api.js";

/** Paths Telnyx is pointed at (relative to PARLEY_BASE_URL). */
export const TELNYX_PATHS = { events: "/carriers/telnyx/events", media: "/media/telnyx" } as const;

/** Telnyx's hang-up causes of a call that never connected, and what each comes to. */
const UNANSWERED = {
  user_busy: "busy",
  call_rejected: "busy",
  timeout: "no_answer",
  no_answer: "no_answer",
  originator_cancel: "no_answer",
} as const;

export interface TelnyxCarrierOptions {
  api: TelnyxApi;
  tokens: CarrierStreamTokens;
  dials: PendingDials;
  /** PARLEY_TELNYX_CONNECTION_ID: the Call Control application calls are placed through. */
  connectionId: string;
  /** PARLEY_BASE_URL: where Telnyx reaches Parley (https). */
  baseUrl: string;
  ringTimeoutMs: number;
  logger: Logger;
}

/**
 * Calls through Telnyx's Call Control (`telnyx` numbers): outbound calls are dialled with their
 * audio streamed to `/media/telnyx` (PCMU both ways) and the single-use stream token in
 * `client_state`, which Telnyx gives back in the stream's `start`; their webhooks
 * (`/carriers/telnyx/events?call_id=...`) tell busy, no answer and failure (see dialThroughApi).
 * Inbound calls are answered from the `call.initiated` webhook the same way (see telnyx-webhooks.ts).
 */
export class TelnyxCarrier implements Carrier {
  readonly name = "telnyx";

  constructor(private readonly options: TelnyxCarrierOptions) {}

  dial(call: { id: string; accountId: string; to: string; from: string | null }, signal: AbortSignal): Promise<DialResult> {
    const { api, baseUrl, ringTimeoutMs, connectionId } = this.options;
    const from = call.from;
    if (!from) return Promise.resolve({ outcome: "failed", reason: "a call through Telnyx needs a from_number (one of the account's Telnyx numbers)" });
    return dialThroughApi(
      {
        carrier: "telnyx",
        call: { ...call, from },
        tokens: this.options.tokens,
        dials: this.options.dials,
        ringTimeoutMs,
        logger: this.options.logger,
        place: (token) =>
          api.dial({
            connectionId,
            to: call.to,
            from,
            webhookUrl: `${baseUrl}${TELNYX_PATHS.events}?call_id=${encodeURIComponent(call.id)}`,
            timeoutSeconds: Math.ceil(ringTimeoutMs / 1000),
            ...this.stream(token),
          }),
        cancel: (callControlId) => api.hangUp(callControlId),
      },
      signal,
    );
  }

  /** Where a call's audio goes, with the token its stream must present. */
  stream(token: string): { streamUrl: string; clientState: string } {
    return { streamUrl: `${websocketBase(this.options.baseUrl)}${TELNYX_PATHS.media}`, clientState: Buffer.from(token, "utf8").toString("base64") };
  }

  /** A `call.hangup` webhook for `callId`: a call that never connected ends its dial (a connected one's stream ended it already). */
  hungUp(callId: string, callControlId: string, cause: string): void {
    const outcome = UNANSWERED[cause as keyof typeof UNANSWERED] ?? "failed";
    this.options.dials.deliverOutcome(callId, callControlId, outcome, `Telnyx: ${cause}`);
  }

  /** Control of the Telnyx call `callControlId` through Call Control: hang-up and transfer. */
  control(callControlId: string): CarrierCallControl {
    const { api } = this.options;
    return { hangUp: () => api.hangUp(callControlId), transfer: (target) => api.transfer(callControlId, target) };
  }

  /** Answers an incoming call, its audio streamed to Parley with `token`. */
  answer(callControlId: string, token: string): Promise<void> {
    return this.options.api.answer(callControlId, this.stream(token));
  }
}
