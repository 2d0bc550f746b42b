import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config.js";
import type { Services } from "../../../src/services/container.js";
import { VonageCarrier } from "../../../src/telephony/carriers/vonage/vonage-carrier.js";
import { setUpVonage } from "../../../src/telephony/carriers/vonage/vonage-setup.js";
import { PendingDials } from "../../../src/telephony/pending-dials.js";
import { vonageKeyPair } from "../../helpers/vonage-standin.js";

// setUpVonage: nothing without an application id; with one, every setting it needs checked at
// start, named, and the private key file's content never quoted.

const dir = mkdtempSync(path.join(os.tmpdir(), "parley-vonage-setup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, content, { mode: 0o600 });
  return p;
};
const rsaKey = file("rsa.key", vonageKeyPair().privateKeyPem);
const ecKey = file("ec.key", generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "pkcs8" }).toString());
const SECRET_LOOKING = "not-a-key-but-a-secret-3c1f";
const garbage = file("garbage.key", SECRET_LOOKING);
const publicOnly = file("public.pem", vonageKeyPair().publicKeyPem);

const deps = { services: { carrierStreams: {} } as unknown as Services, dials: new PendingDials(), logger: pino({ level: "silent" }) };
const GOOD = {
  PARLEY_VONAGE_APPLICATION_ID: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
  PARLEY_VONAGE_PRIVATE_KEY_FILE: rsaKey,
  PARLEY_VONAGE_SIGNATURE_SECRET: "signature-secret",
  PARLEY_BASE_URL: "https://voice.example.com",
};
const setUp = (env: Record<string, string>) => setUpVonage(loadConfig({ env, cwd: dir }), deps);

/** The ConfigError setUpVonage throws for `env`. */
function refusal(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    setUp(env);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return caught as ConfigError;
}

describe("setUpVonage", () => {
  it("is nothing without PARLEY_VONAGE_APPLICATION_ID, the carrier with every setting usable", () => {
    expect(setUp({})).toBeUndefined();
    expect(setUp(GOOD)).toBeInstanceOf(VonageCarrier);
  });

  it("names the setting that stops it", () => {
    expect(refusal({ ...GOOD, PARLEY_VONAGE_APPLICATION_ID: "my-app" }).key).toBe("PARLEY_VONAGE_APPLICATION_ID");
    expect(refusal({ ...GOOD, PARLEY_VONAGE_PRIVATE_KEY_FILE: "" }).key).toBe("PARLEY_VONAGE_PRIVATE_KEY_FILE");
    const missing = refusal({ ...GOOD, PARLEY_VONAGE_PRIVATE_KEY_FILE: path.join(dir, "absent.key") });
    expect(missing).toMatchObject({ key: "PARLEY_VONAGE_PRIVATE_KEY_FILE" });
    expect(missing.message).toContain("ENOENT");
    expect(refusal({ ...GOOD, PARLEY_VONAGE_PRIVATE_KEY_FILE: dir }).key).toBe("PARLEY_VONAGE_PRIVATE_KEY_FILE");
    expect(refusal({ ...GOOD, PARLEY_VONAGE_PRIVATE_KEY_FILE: ecKey }).message).toContain("RSA");
    expect(refusal({ ...GOOD, PARLEY_VONAGE_PRIVATE_KEY_FILE: publicOnly }).key).toBe("PARLEY_VONAGE_PRIVATE_KEY_FILE");
    const notKey = refusal({ ...GOOD, PARLEY_VONAGE_PRIVATE_KEY_FILE: garbage });
    expect(notKey.key).toBe("PARLEY_VONAGE_PRIVATE_KEY_FILE");
    expect(notKey.message).not.toContain(SECRET_LOOKING);
    expect(refusal({ ...GOOD, PARLEY_VONAGE_SIGNATURE_SECRET: "" }).key).toBe("PARLEY_VONAGE_SIGNATURE_SECRET");
    // Unset, it is derived (http://host:port): not a URL Vonage reaches, nor TLS.
    expect(refusal({ ...GOOD, PARLEY_BASE_URL: "" }).key).toBe("PARLEY_BASE_URL");
    expect(refusal({ ...GOOD, PARLEY_BASE_URL: "http://voice.example.com" }).key).toBe("PARLEY_BASE_URL");
  });
});
