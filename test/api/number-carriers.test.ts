import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARRIERS } from "../../src/config.js";
import { PhoneNumbersRepository } from "../../src/db/repositories/phone-numbers.js";
import { runAdmin } from "../helpers/admin-cli.js";
import { databaseAt } from "../helpers/database-at.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Each phone number records its carrier (issue 28): the operator names it with
// `parley admin number add --carrier`; a number without one (every number from before
// migration 024) follows PARLEY_CARRIER. The API shows it and never takes it.

let app: TestApp;
let acct: TestAccount;
beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

const numberAdd = (...args: string[]) => runAdmin(app.config, "number", "add", "--account", acct.id, ...args);

describe("a phone number's carrier", () => {
  it("is the default (PARLEY_CARRIER) for a number added without --carrier, in the CLI's answer, a read and the list", async () => {
    const added = await numberAdd("--number", "+14155550161", "--json");
    expect(added.code).toBe(0);
    const printed = JSON.parse(added.stdout);
    expect(printed.carrier).toBe(app.config.carrier);
    const read = await app.request("GET", `/v1/phone-numbers/${printed.id}`, { key: acct.key });
    expect(read.body).toEqual(printed);
    const list = await app.request("GET", "/v1/phone-numbers?limit=100", { key: acct.key });
    expect(list.body.data.find((n: { id: string }) => n.id === printed.id)).toEqual(printed);
    // Stored as "the default", so it follows the setting.
    expect(await new PhoneNumbersRepository(app.parley.services.db).carrierOf(acct.id, "+14155550161")).toBeNull();
  });

  it("is the one named with --carrier twilio, whatever the default", async () => {
    expect(app.config.carrier).not.toBe("twilio");
    const added = await numberAdd("--number", "+14155550162", "--carrier", "twilio", "--json");
    expect(added.code).toBe(0);
    const printed = JSON.parse(added.stdout);
    expect(printed.carrier).toBe("twilio");
    const read = await app.request("GET", `/v1/phone-numbers/${printed.id}`, { key: acct.key });
    expect(read.status).toBe(200);
    expect(read.body.carrier).toBe("twilio");
    const list = await app.request("GET", "/v1/phone-numbers?limit=100", { key: acct.key });
    expect(list.body.data.find((n: { id: string }) => n.id === printed.id)).toEqual(read.body);
    const numbers = new PhoneNumbersRepository(app.parley.services.db);
    expect(await numbers.carrierOf(acct.id, "+14155550162")).toBe("twilio");
    // Another account, or a number the account does not hold active, has none.
    expect(await numbers.carrierOf((await app.account()).id, "+14155550162")).toBeUndefined();
    expect(await numbers.carrierOf(acct.id, "+14155550199")).toBeUndefined();
  });

  it("is shown by number list, a number without one as the setting of the moment", async () => {
    const own = await numberAdd("--number", "+14155550163", "--carrier", "sip", "--json");
    const plain = await numberAdd("--number", "+14155550164", "--json");
    expect([own.code, plain.code]).toEqual([0, 0]);
    const other = CARRIERS.find((c) => c !== app.config.carrier && c !== "sip")!;
    for (const [config, plainCarrier] of [[app.config, app.config.carrier], [{ ...app.config, carrier: other }, other]] as const) {
      const listed = await runAdmin(config, "number", "list", "--account", acct.id, "--json");
      expect(listed.code).toBe(0);
      const rows = JSON.parse(listed.stdout) as Array<{ phone_number: string; carrier: string }>;
      expect(rows.find((n) => n.phone_number === "+14155550163")?.carrier).toBe("sip");
      expect(rows.find((n) => n.phone_number === "+14155550164")?.carrier).toBe(plainCarrier);
    }
    const table = await runAdmin(app.config, "number", "list", "--number", "+14155550163");
    expect(table.stdout).toMatch(/\bsip\b/);
  });

  it.each([["telegraph"], ["TWILIO"], [""]])("refuses --carrier %j with exit code 2, naming --carrier and the known carriers; nothing is added", async (name) => {
    const res = await numberAdd("--number", "+14155550165", "--carrier", name);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(`--carrier must be one of ${CARRIERS.join(", ")}`);
    expect(await new PhoneNumbersRepository(app.parley.services.db).listAll({ phoneNumber: "+14155550165" })).toEqual([]);
  });

  it("cannot be chosen through the API: a carrier in a claim or a change is refused as an unknown field", async () => {
    const claim = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: "+14155550166", country: "US", carrier: "twilio" } });
    expect(claim.status).toBe(400);
    expect(claim.body.error.code).toBe("invalid_request");
    expect(claim.body.error.message).toContain("carrier");
    const created = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: "+14155550166", country: "US" } });
    expect(created.status).toBe(201);
    expect(created.body.carrier).toBe(app.config.carrier);
    const change = await app.request("PATCH", `/v1/phone-numbers/${created.body.id}`, { key: acct.key, body: { carrier: "twilio" } });
    expect(change.status).toBe(400);
    expect(change.body.error.code).toBe("invalid_request");
    await app.approveNumber(created.body.id);
    expect(await new PhoneNumbersRepository(app.parley.services.db).carrierOf(acct.id, "+14155550166")).toBeNull();
  });

  it("is described in the OpenAPI document as one of the carriers, read-only", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const schema = doc.paths["/v1/phone-numbers/{phone_number_id}"].get.responses["200"].content["application/json"].schema;
    const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
    const carrier = resolved.properties?.carrier ?? resolved.allOf?.find((s: { properties?: { carrier?: unknown } }) => s.properties?.carrier)?.properties.carrier;
    expect(carrier.enum).toEqual([...CARRIERS]);
    expect(resolved.required ?? []).toContain("carrier");
    const create = doc.paths["/v1/phone-numbers"].post.requestBody.content["application/json"].schema;
    expect(JSON.stringify(create)).not.toContain("carrier");
  });
});

/**
 * A database of the version before 024 (the dialect of this test lane) holding an account and
 * an active number, then a test app started over it: the app's start migrates it.
 */
async function appOverDatabaseBefore024(): Promise<{ app: TestApp; accountId: string; numberId: string; cleanUp(): Promise<void> }> {
  const { db, appArgs, cleanUp } = await databaseAt("023-rate-leases");
  const at = "2024-01-01T00:00:00.000Z";
  await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
    VALUES ('acct_old', 'Old', 'pro', 100, 's', '{}', ${at}, ${at})`.execute(db);
  await sql`INSERT INTO phone_numbers (id, account_id, phone_number, friendly_name, country, status, approved_at, created_at, updated_at)
    VALUES ('pn_old', 'acct_old', '+14155550170', 'Old line', 'US', 'active', ${at}, ${at}, ${at})`.execute(db);
  await db.destroy();
  return { app: await startTestApp(...appArgs), accountId: "acct_old", numberId: "pn_old", cleanUp };
}

describe("a number from before migration 024", () => {
  it("keeps working: no carrier stored, shown as the default, still the calls' from_number", async () => {
    const old = await appOverDatabaseBefore024();
    try {
      const key = await old.app.key(old.accountId);
      const read = await old.app.request("GET", `/v1/phone-numbers/${old.numberId}`, { key });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ phone_number: "+14155550170", friendly_name: "Old line", status: "active", carrier: old.app.config.carrier });
      const list = await old.app.request("GET", "/v1/phone-numbers", { key });
      expect(list.body.data).toEqual([read.body]);
      expect(await new PhoneNumbersRepository(old.app.parley.services.db).carrierOf(old.accountId, "+14155550170")).toBeNull();

      const agent = await old.app.request("POST", "/v1/agents", { key, body: { name: "Caller", system_prompt: "You call people.", voice_id: "flite-slt" } });
      const call = await old.app.request("POST", "/v1/calls", { key, body: { phone_number: "+14155550123", agent_id: agent.body.id } });
      expect(call.status).toBe(200);
      expect(call.body.from_number).toBe("+14155550170");
    } finally {
      await old.app.close();
      await old.cleanUp();
    }
  });
});
