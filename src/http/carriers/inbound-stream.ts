import type { Logger } from "pino";
import { isE164 } from "../../core/e164.js";
import { callerNumber, canonicalPhoneNumber } from "../../core/phone-number.js";
import type { Services } from "../../services/container.js";

/** How long an inbound call's stream token may wait for the carrier to open the stream (carriers do at once). */
const INBOUND_STREAM_TTL_MS = 60_000;

/**
 * The stream token for a call a carrier's webhook announced: when Parley holds `to` active, with
 * this carrier (its own, or the default PARLEY_CARRIER) and a default agent, a single-use token
 * for that agent's call, bound to the carrier's id of the call. Undefined (and logged) for any
 * other number: the carrier is told to end the call.
 */
export async function inboundStreamToken(
  services: Services,
  logger: Logger,
  carrier: string,
  call: { to: string | null; from: string | null; carrierCallId: string | null },
): Promise<string | undefined> {
  const { to, from, carrierCallId } = call;
  const number = to && carrierCallId ? await services.phoneNumbers.findActiveAnywhere(to) : undefined;
  if (!to || !carrierCallId || !number || (number.carrier ?? services.config.carrier) !== carrier || !number.default_agent_id) {
    logger.info({ to, carrier, carrier_call_id: carrierCallId }, number ? "carrier call to a number with no agent or another carrier refused" : "carrier call to an unknown number refused");
    return undefined;
  }
  return services.carrierStreams.issue(
    { carrier, accountId: number.account_id, direction: "inbound", callId: null, agentId: number.default_agent_id, phoneNumber: to, fromNumber: from, carrierCallId },
    INBOUND_STREAM_TTL_MS,
  );
}

/** The dialled number and the caller of a webhook that writes them in E.164 (Twilio, Telnyx), canonical; null when not a number. */
export function announcedNumbers(to: unknown, from: unknown): { to: string | null; from: string | null } {
  return {
    to: typeof to === "string" && isE164(to) ? canonicalPhoneNumber(to) : null,
    from: typeof from === "string" && isE164(from) ? callerNumber(from) : null,
  };
}
