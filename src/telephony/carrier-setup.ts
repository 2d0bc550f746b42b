import { ConfigError, type CarrierName, type Config } from "../config.js";
import type { Services } from "../services/container.js";
import type { Carrier } from "./carrier.js";
import { CarrierChoice } from "./carrier-choice.js";
import { SimulatorCarrier } from "./simulator/simulator-carrier.js";
import { SipTrunkCarrier } from "./sip-trunk-carrier.js";
import type { SipGateway } from "./sip-gateway.js";

/** The setting that sets up each carrier reached through its API. */
const API_CARRIER_SETTING: Record<string, string> = { twilio: "PARLEY_TWILIO_ACCOUNT_SID", telnyx: "PARLEY_TELNYX_API_KEY", vonage: "PARLEY_VONAGE_APPLICATION_ID" };

/**
 * The choice of carrier for outbound calls between every carrier the settings allow: the
 * simulator always, the SIP trunk with SIP on and PARLEY_SIP_TRUNK, and the carriers reached
 * through their APIs that were set up (made first: their media endpoints need them). The
 * default carrier (PARLEY_CARRIER) must be one of them.
 */
export function chooseCarriers(config: Config, deps: { services: Services; sip: SipGateway | undefined; api: ReadonlyMap<CarrierName, Carrier> }): CarrierChoice {
  const available = new Map<CarrierName, Carrier>([["simulator", new SimulatorCarrier()], ...deps.api]);
  const sip = sipTrunk(config, deps.sip);
  if (sip) available.set("sip", sip);
  if (!available.has(config.carrier)) {
    if (config.carrier === "sip") {
      if (!deps.sip) throw new ConfigError("PARLEY_CARRIER", "sip needs SIP on (PARLEY_SIP_PORT not 0)");
      throw new ConfigError("PARLEY_SIP_TRUNK", "is required with PARLEY_CARRIER=sip");
    }
    throw new ConfigError(API_CARRIER_SETTING[config.carrier]!, `is required with PARLEY_CARRIER=${config.carrier}`);
  }
  return new CarrierChoice(available, config.carrier, deps.services.phoneNumbers);
}

function sipTrunk(config: Config, sip: SipGateway | undefined): SipTrunkCarrier | undefined {
  if (!sip || !config.sip.trunk) return undefined;
  const { trunkUser: username, trunkPassword: password, trunkRealm: realm } = config.sip;
  if (password && !username) throw new ConfigError("PARLEY_SIP_TRUNK_USER", "is required with PARLEY_SIP_TRUNK_PASSWORD");
  const credentials = username ? { username, password, ...(realm ? { realm } : {}) } : undefined;
  return new SipTrunkCarrier(sip.userAgent, config.sip.trunk, config.sip.ringTimeoutMs, credentials);
}
