import { createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { ConfigError, type Config } from "../../../config.js";
import type { Services } from "../../../services/container.js";
import type { PendingDials } from "../../pending-dials.js";
import { VonageApi, VONAGE_UUID } from "./vonage-api.js";
import { VonageCarrier } from "./vonage-carrier.js";

/**
 * The Vonage carrier when PARLEY_VONAGE_APPLICATION_ID is set (its webhooks and media streams
 * are then served). A setting it needs that is missing or unusable stops start-up, named: the
 * private key file is read once, here, and must hold an RSA private key (PEM).
 */
export function setUpVonage(config: Config, deps: { services: Services; dials: PendingDials; logger: Logger }): VonageCarrier | undefined {
  const { applicationId, privateKeyFile, signatureSecret, apiUrl } = config.vonage;
  if (!applicationId) return undefined;
  if (!VONAGE_UUID.test(applicationId)) throw new ConfigError("PARLEY_VONAGE_APPLICATION_ID", "must be the application's id (a UUID)");
  const privateKey = readPrivateKey(privateKeyFile);
  if (!signatureSecret) throw new ConfigError("PARLEY_VONAGE_SIGNATURE_SECRET", "is required with PARLEY_VONAGE_APPLICATION_ID: Vonage's webhooks are checked with it");
  // Unset, it is http://host:port, which Vonage cannot reach; and the stream token travels in the NCCO's WebSocket: TLS only.
  if (!/^https:\/\//i.test(config.baseUrl)) throw new ConfigError("PARLEY_BASE_URL", "must be set to the public https:// URL Vonage reaches this service at (required with PARLEY_VONAGE_APPLICATION_ID)");
  return new VonageCarrier({
    api: new VonageApi({ applicationId, privateKey, apiUrl }),
    tokens: deps.services.carrierStreams,
    dials: deps.dials,
    baseUrl: config.baseUrl.replace(/\/+$/, ""),
    ringTimeoutMs: config.sip.ringTimeoutMs,
    logger: deps.logger.child({ carrier: "vonage" }),
  });
}

/** The application's RSA private key from its file; a ConfigError that never quotes the file's content otherwise. */
function readPrivateKey(file: string): KeyObject {
  const setting = "PARLEY_VONAGE_PRIVATE_KEY_FILE";
  if (!file) throw new ConfigError(setting, "is required with PARLEY_VONAGE_APPLICATION_ID");
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw new ConfigError(setting, `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new ConfigError(setting, "does not hold a private key (PEM, as the Vonage dashboard gives it)");
  }
  if (key.asymmetricKeyType !== "rsa") throw new ConfigError(setting, "must hold an RSA private key");
  return key;
}
