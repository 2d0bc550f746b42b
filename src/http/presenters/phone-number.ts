import type { PhoneNumberRecord } from "../../db/repositories/phone-numbers.js";

/**
 * The phone number object: the same in lists and single reads. `carrier` is the number's own,
 * or `defaultCarrier` (PARLEY_CARRIER) for a number that records none.
 */
export function presentPhoneNumber(n: PhoneNumberRecord, defaultCarrier: string) {
  return {
    id: n.id,
    phone_number: n.phone_number,
    friendly_name: n.friendly_name,
    country: n.country,
    region: n.region,
    capabilities: { voice: n.capabilities.voice, sms: n.capabilities.sms },
    carrier: n.carrier ?? defaultCarrier,
    status: n.status,
    default_agent_id: n.default_agent_id,
    created_at: n.created_at,
    updated_at: n.updated_at,
  };
}
