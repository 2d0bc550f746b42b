import type { KeyObject } from "node:crypto";
import type { Logger } from "pino";
import { ConfigError, type Config } from "../../../config.js";
import type { Services } from "../../../services/container.js";
import type { PendingDials } from "../../pending-dials.js";
import { TelnyxApi } from "./telnyx-api.js";
import { TelnyxCarrier } from "./telnyx-carrier.js";
import { telnyxPublicKey } from "./webhook-signature.js";

/**
 * The Telnyx carrier when PARLEY_TELNYX_API_KEY is set (its webhooks and media streams are then
 * served), with the key its webhooks are checked with; a missing or malformed setting it needs
 * stops start-up, named.
 */
export function setUpTelnyx(config: Config, deps: { services: Services; dials: PendingDials; logger: Logger }): { carrier: TelnyxCarrier; publicKey: KeyObject } | undefined {
  const { apiKey, publicKey, connectionId, apiUrl } = config.telnyx;
  if (!apiKey) return undefined;
  const key = telnyxPublicKey(publicKey);
  if (!key) throw new ConfigError("PARLEY_TELNYX_PUBLIC_KEY", "is required with PARLEY_TELNYX_API_KEY: the base64 public key (32 bytes) from Telnyx's portal");
  if (!connectionId) throw new ConfigError("PARLEY_TELNYX_CONNECTION_ID", "is required with PARLEY_TELNYX_API_KEY: the Call Control application's id");
  if (!/^https?:\/\//.test(config.baseUrl)) throw new ConfigError("PARLEY_BASE_URL", "is required with PARLEY_TELNYX_API_KEY: the public URL Telnyx reaches this service at");
  const carrier = new TelnyxCarrier({
    api: new TelnyxApi({ apiKey, apiUrl }),
    tokens: deps.services.carrierStreams,
    dials: deps.dials,
    connectionId,
    baseUrl: config.baseUrl.replace(/\/+$/, ""),
    ringTimeoutMs: config.sip.ringTimeoutMs,
    logger: deps.logger.child({ carrier: "telnyx" }),
  });
  return { carrier, publicKey: key };
}
