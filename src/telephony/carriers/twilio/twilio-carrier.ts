import type { Logger } from "pino";
import type { Carrier, DialResult } from "../../carrier.js";
import { dialThroughApi } from "../api-dial.js";
import type { CarrierStreamTokens } from "../../../services/carrier-stream-tokens.js";
import type { PendingDials } from "../../pending-dials.js";
import type { CarrierCallControl } from "../../carrier-call-control.js";
import type { TwilioApi } from "./twilio-api.js";
import { connectStreamTwiml, dialTwiml } from "./twiml.js";
import { websocketBase } from "../public-url.js";

/** Twilio's call statuses that end a dial, and what each comes to. */
const UNANSWERED = { busy: "busy", "no-answer": "no_answer", canceled: "no_answer", failed: "failed", completed: "failed" } as const;

/** Paths Twilio is pointed at (relative to PARLEY_BASE_URL). */
export const TWILIO_PATHS = { voice: "/carriers/twilio/voice", status: "/carriers/twilio/status", media: "/media/twilio" } as const;

export interface TwilioCarrierOptions {
  api: TwilioApi;
  tokens: CarrierStreamTokens;
  dials: PendingDials;
  /** PARLEY_BASE_URL: where Twilio reaches Parley (https). */
  baseUrl: string;
  ringTimeoutMs: number;
  logger: Logger;
}

/**
 * Outbound calls through Twilio's Calls API (`PARLEY_CARRIER=twilio`, or a number whose carrier
 * is `twilio`): the call is created with TwiML that connects its audio to `/media/twilio` with a
 * single-use stream token, and a status callback (`/carriers/twilio/status?call_id=...`, signed
 * by Twilio) that tells busy, no answer and failure (see dialThroughApi).
 */
export class TwilioCarrier implements Carrier {
  readonly name = "twilio";

  constructor(private readonly options: TwilioCarrierOptions) {}

  dial(call: { id: string; accountId: string; to: string; from: string | null }, signal: AbortSignal): Promise<DialResult> {
    const { api, baseUrl, ringTimeoutMs } = this.options;
    const from = call.from;
    if (!from) return Promise.resolve({ outcome: "failed", reason: "a call through Twilio needs a from_number (one of the account's Twilio numbers)" });
    return dialThroughApi(
      {
        carrier: "twilio",
        call: { ...call, from },
        tokens: this.options.tokens,
        dials: this.options.dials,
        ringTimeoutMs,
        logger: this.options.logger,
        place: async (token) =>
          (
            await api.createCall({
              to: call.to,
              from,
              twiml: connectStreamTwiml(`${websocketBase(baseUrl)}${TWILIO_PATHS.media}`, { stream_token: token }),
              statusCallback: `${baseUrl}${TWILIO_PATHS.status}?call_id=${encodeURIComponent(call.id)}`,
              statusCallbackEvents: ["initiated", "ringing", "answered", "completed"],
              timeoutSeconds: Math.ceil(ringTimeoutMs / 1000),
            })
          ).sid,
        cancel: async (sid) => {
          await api.updateCall(sid, { status: "canceled" });
        },
      },
      signal,
    );
  }

  /** A status callback for `callId`: a final status that ends its dial (an answered call's stream ends the dial itself). */
  statusChanged(callId: string, callSid: string, status: string): void {
    const outcome = UNANSWERED[status as keyof typeof UNANSWERED];
    if (outcome) this.options.dials.deliverOutcome(callId, callSid, outcome, `Twilio: ${status}`);
  }

  /** Control of the Twilio call `callSid` through the API: hang-up and transfer. */
  control(callSid: string): CarrierCallControl {
    const { api } = this.options;
    return {
      hangUp: () => api.updateCall(callSid, { status: "completed" }).then(() => undefined),
      transfer: (target) => api.updateCall(callSid, { twiml: dialTwiml(target) }).then(() => undefined),
    };
  }
}
