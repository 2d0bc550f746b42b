import type { Logger } from "pino";
import { ConfigError, type CarrierName, type Config } from "../config.js";
import type { Services } from "../services/container.js";
import type { Carrier } from "./carrier.js";
import { CarrierChoice } from "./carrier-choice.js";
import { TwilioApi } from "./carriers/twilio/twilio-api.js";
import { TwilioCarrier } from "./carriers/twilio/twilio-carrier.js";
import type { PendingDials } from "./pending-dials.js";
import { SimulatorCarrier } from "./simulator/simulator-carrier.js";
import { SipTrunkCarrier } from "./sip-trunk-carrier.js";
import type { SipGateway } from "./sip-gateway.js";

const ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;

/**
 * The choice of carrier for outbound calls between every carrier the settings allow: the
 * simulator always, the SIP trunk with SIP on and PARLEY_SIP_TRUNK, Twilio with its account
 * (setUpTwilio, made first: its media endpoint needs it). The default carrier
 * (PARLEY_CARRIER) must be one of them.
 */
export function chooseCarriers(config: Config, deps: { services: Services; sip: SipGateway | undefined; twilio: TwilioCarrier | undefined; vonage?: Carrier | undefined; telnyx?: Carrier | undefined }): CarrierChoice {
  const available = new Map<CarrierName, Carrier>([["simulator", new SimulatorCarrier()]]);
  const sip = sipTrunk(config, deps.sip);
  if (sip) available.set("sip", sip);
  if (deps.twilio) available.set("twilio", deps.twilio);
  if (deps.vonage) available.set("vonage", deps.vonage);
  if (deps.telnyx) available.set("telnyx", deps.telnyx);
  if (!available.has(config.carrier)) {
    if (config.carrier === "sip") {
      if (!deps.sip) throw new ConfigError("PARLEY_CARRIER", "sip needs SIP on (PARLEY_SIP_PORT not 0)");
      throw new ConfigError("PARLEY_SIP_TRUNK", "is required with PARLEY_CARRIER=sip");
    }
    if (config.carrier === "telnyx") throw new ConfigError("PARLEY_TELNYX_API_KEY", "is required with PARLEY_CARRIER=telnyx");
    if (config.carrier === "vonage") throw new ConfigError("PARLEY_VONAGE_APPLICATION_ID", "is required with PARLEY_CARRIER=vonage");
    throw new ConfigError("PARLEY_TWILIO_ACCOUNT_SID", `is required with PARLEY_CARRIER=${config.carrier}`);
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

/**
 * The Twilio carrier when PARLEY_TWILIO_ACCOUNT_SID is set (its webhooks and media streams are
 * then served); a missing or malformed setting it needs stops start-up, named.
 */
export function setUpTwilio(config: Config, deps: { services: Services; dials: PendingDials; logger: Logger }): TwilioCarrier | undefined {
  const { accountSid, authToken, apiUrl } = config.twilio;
  if (!accountSid) return undefined;
  if (!ACCOUNT_SID.test(accountSid)) throw new ConfigError("PARLEY_TWILIO_ACCOUNT_SID", "must be AC followed by 32 hex digits");
  if (!authToken) throw new ConfigError("PARLEY_TWILIO_AUTH_TOKEN", "is required with PARLEY_TWILIO_ACCOUNT_SID");
  if (!/^https?:\/\//.test(config.baseUrl)) throw new ConfigError("PARLEY_BASE_URL", "is required with PARLEY_TWILIO_ACCOUNT_SID: the public URL Twilio reaches this service at");
  return new TwilioCarrier({
    api: new TwilioApi({ accountSid, authToken, apiUrl }),
    tokens: deps.services.carrierStreams,
    dials: deps.dials,
    baseUrl: config.baseUrl.replace(/\/+$/, ""),
    ringTimeoutMs: config.sip.ringTimeoutMs,
    logger: deps.logger.child({ carrier: "twilio" }),
  });
}
