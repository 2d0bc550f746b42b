import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin, type AdminRun } from "../helpers/admin-cli.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

/** Runs `parley admin number add ...` in-process against the test app's data directory. */
const numberAdd = (...args: string[]): Promise<AdminRun> => runAdmin(app.config, "number", "add", ...args);

describe("parley admin number add", () => {
  it("registers a +1 number as US by default and prints it as JSON", async () => {
    const res = await numberAdd("--account", acct.id, "--number", "+14155550142", "--json");
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toMatchObject({
      phone_number: "+14155550142",
      friendly_name: "+14155550142",
      country: "US",
      region: null,
      capabilities: { voice: true, sms: false },
      status: "active",
      default_agent_id: null,
    });
    const read = await app.request("GET", `/v1/phone-numbers/${printed.id}`, { key: acct.key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(printed);
  });

  it("takes every option and prints key: value lines without --json", async () => {
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Front desk", system_prompt: "You answer calls.", voice_id: "flite-slt" },
    });
    const res = await numberAdd(
      "--account", acct.id,
      "--number", "+442071838751",
      "--country", "gb",
      "--region", "LND",
      "--friendly-name", "London desk",
      "--agent", agent.body.id,
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^phone_number\s+\+442071838751$/m);
    expect(res.stdout).toMatch(/^country\s+GB$/m);
    const list = await app.request("GET", "/v1/phone-numbers?country=GB", { key: acct.key });
    expect(list.body.data[0]).toMatchObject({
      phone_number: "+442071838751",
      country: "GB",
      region: "LND",
      friendly_name: "London desk",
      default_agent_id: agent.body.id,
    });
  });

  it("makes the number usable as the default from_number of calls", async () => {
    const fresh = await app.account();
    const agent = await app.request("POST", "/v1/agents", {
      key: fresh.key,
      body: { name: "Caller", system_prompt: "You call people.", voice_id: "flite-slt" },
    });
    const body = { phone_number: "+14155550123", agent_id: agent.body.id };
    const before = await app.request("POST", "/v1/calls", { key: fresh.key, body });
    expect(before.body.error.code).toBe("invalid_from_number");
    expect((await numberAdd("--account", fresh.id, "--number", "+16505550142")).code).toBe(0);
    const after = await app.request("POST", "/v1/calls", { key: fresh.key, body });
    expect(after.status).toBe(200);
    expect(after.body.from_number).toBe("+16505550142");
  });

  it.each([
    [["--number", "+442071838752"], "--country is required"],
    [["--number", "4155550100"], "--number must be an E.164"],
    [["--number", "+4477009", "--country", "GB"], "--number +4477009 is not a possible number for GB (too short)"],
    [["--number", "+14155550143", "--country", "USA"], "--country must be a two-letter"],
    [["--number", "+14155550144", "--friendly-name", " "], "--friendly-name must not be empty"],
    [["--number", "+14155550145", "--agent", "agent_nope"], "agent_not_found"],
    [["--number", "+14155550142"], "phone_number_in_use"],
    [["--number", "+14155550146", "--colour", "red"], "colour"],
    [[], "--number is required"],
  ])("refuses %j with exit code 2 saying %s", async (args, message) => {
    const res = await numberAdd("--account", acct.id, ...args);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(message);
  });

  it("stores the number in canonical form, and finds it by either spelling", async () => {
    const res = await numberAdd("--account", acct.id, "--number", "+4402071838753", "--country", "GB", "--json");
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ phone_number: "+442071838753", status: "active" });
    const listed = await runAdmin(app.config, "number", "list", "--number", "+4402071838753", "--json");
    expect(JSON.parse(listed.stdout)).toMatchObject([{ phone_number: "+442071838753", account_id: acct.id }]);
    const again = await numberAdd("--account", acct.id, "--number", "+442071838753", "--country", "GB");
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("phone_number_in_use");
  });

  it("refuses an unknown account", async () => {
    const res = await numberAdd("--account", "acct_nope", "--number", "+14155550147");
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("no account acct_nope");
  });
});
