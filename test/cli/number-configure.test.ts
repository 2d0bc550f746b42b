import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { runAdmin } from "../helpers/admin-cli.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { TwilioStandIn } from "../helpers/twilio-standin.js";

// `parley admin number add --carrier twilio --configure`: the number's voice webhook is set at
// Twilio (IncomingPhoneNumbers) to this service, so nothing is left to do in Twilio's console.

let app: TestApp;
let acct: TestAccount;
let standIn: TwilioStandIn;
let config: Config;

beforeAll(async () => {
  standIn = new TwilioStandIn();
  await standIn.start();
  app = await startTestApp();
  acct = await app.account();
  config = { ...app.config, baseUrl: "https://voice.example.test", twilio: { accountSid: standIn.accountSid, authToken: standIn.authToken, apiUrl: standIn.url } };
});
afterAll(async () => {
  await app?.close();
  await standIn?.close();
});

const add = (cfg: Config, ...args: string[]) => runAdmin(cfg, "number", "add", "--account", acct.id, "--json", ...args);

describe("parley admin number add --configure", () => {
  it("points the Twilio number's voice URL at /carriers/twilio/voice and adds it with carrier twilio", async () => {
    const held = standIn.addNumber("+14155550160");
    const run = await add(config, "--number", "+14155550160", "--carrier", "twilio", "--configure");
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(printed).toMatchObject({ phone_number: "+14155550160", carrier: "twilio", status: "active", twilio: { sid: held.sid, voice_url: "https://voice.example.test/carriers/twilio/voice" } });
    expect(held).toMatchObject({ voiceUrl: "https://voice.example.test/carriers/twilio/voice", voiceMethod: "POST" });
  });

  it("adds nothing when the Twilio account does not hold the number", async () => {
    const run = await add(config, "--number", "+14155550161", "--carrier", "twilio", "--configure");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the Twilio account has no number \+14155550161/);
    expect(await app.parley.services.phoneNumbers.findActiveAnywhere("+14155550161")).toBeUndefined();
  });

  it("is refused for another carrier, or without the Twilio settings, before anything is sent", async () => {
    const requests = standIn.requests.length;
    standIn.addNumber("+14155550162");
    const simulator = await add(config, "--number", "+14155550162", "--carrier", "simulator", "--configure");
    expect(simulator.code).toBe(2);
    expect(simulator.stderr).toMatch(/--configure is for Twilio numbers/);
    const unset = await add({ ...config, twilio: { accountSid: "", authToken: "", apiUrl: standIn.url } }, "--number", "+14155550162", "--carrier", "twilio", "--configure");
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/PARLEY_TWILIO_ACCOUNT_SID/);
    expect(standIn.requests.length).toBe(requests);
    expect(await app.parley.services.phoneNumbers.findActiveAnywhere("+14155550162")).toBeUndefined();
  });
});
