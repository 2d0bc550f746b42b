import type { Logger } from "pino";
import { ConfigError, type Config } from "../../../config.js";
import type { Services } from "../../../services/container.js";
import type { PendingDials } from "../../pending-dials.js";
import { ACCOUNT_SID, TwilioApi } from "./twilio-api.js";
import { TwilioCarrier } from "./twilio-carrier.js";

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
