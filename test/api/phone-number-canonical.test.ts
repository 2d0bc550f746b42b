import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIMULATOR_MAGIC_NUMBERS } from "../../src/telephony/simulator/simulator-carrier.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Phone numbers compared as numbers, not strings (issue 25, item 9): `+4407700900123` is a UK
// mobile written with its national trunk 0 after the country code, the number `+447700900123`.
const LISTED = "+447700900123";
const LISTED_WITH_TRUNK_ZERO = "+4407700900123";

let app: TestApp;
let acct: TestAccount;
let agentId: string;

const db = () => app.parley.services.db;
const call = (phone_number: string, key = acct.key) => app.request("POST", "/v1/calls", { key, body: { phone_number, agent_id: agentId } });
/** An appointment of the account (appointments are booked on calls; the API changes them). */
const appointment = () => app.parley.services.appointments.create({ account_id: acct.id, date: "2030-03-01", time: "10:30", customer_name: "Ada" });
const addDoNotCall = (phone_number: string, key = acct.key) => app.request("POST", "/v1/do-not-call", { key, body: { phone_number } });

function expectRefused(res: ApiResponse, code: string, field: string, message: RegExp): void {
  expect(res.status).toBe(400);
  const error = errorOf(res);
  expect(error.code).toBe(code);
  expect(error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  expect(error.message).toMatch(message);
}

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account({ credits: 1000 });
  // Numbers in +1 and +44, so the destination guard lets both through.
  await app.activeNumber(acct.key, { phone_number: "+14155550100", country: "US" });
  await app.activeNumber(acct.key, { phone_number: "+442071838750", country: "GB" });
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Ava", system_prompt: "You call customers.", voice_id: "flite-slt" } });
  expect(agent.status).toBe(201);
  agentId = agent.body.id;
  expect((await addDoNotCall(LISTED)).status).toBe(201);
});
afterAll(async () => {
  await app?.close();
});

describe("the do-not-call list holds numbers, not spellings", () => {
  it("refuses a call to a listed number written with its trunk 0", async () => {
    const res = await call(LISTED_WITH_TRUNK_ZERO);
    expectRefused(res, "phone_number_on_do_not_call_list", "phone_number", /\+447700900123 is on the account's do-not-call list/);
    expect(await db().selectFrom("calls").select("id").where("phone_number", "in", [LISTED, LISTED_WITH_TRUNK_ZERO]).execute()).toEqual([]);
  });

  it("stores the number in canonical form, and finds and removes it by either spelling", async () => {
    const added = await addDoNotCall("+4407700900555");
    expect(added.status).toBe(201);
    expect(added.body.phone_number).toBe("+447700900555");
    const again = await addDoNotCall("+447700900555");
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(added.body.id);
    const rows = await db().selectFrom("do_not_call").select("phone_number").where("account_id", "=", acct.id).where("phone_number", "like", "%900555").execute();
    expect(rows).toEqual([{ phone_number: "+447700900555" }]);
    expect((await app.request("GET", `/v1/do-not-call/${encodeURIComponent("+4407700900555")}`, { key: acct.key })).body.id).toBe(added.body.id);
    const removed = await app.request("DELETE", `/v1/do-not-call/${encodeURIComponent("+4407700900555")}`, { key: acct.key });
    expect(removed.status).toBe(200);
    expect((await app.request("GET", `/v1/do-not-call/${encodeURIComponent("+447700900555")}`, { key: acct.key })).status).toBe(404);
  });

  it("skips a campaign contact written with the trunk 0 as do-not-call, and stores the contact in canonical form", async () => {
    const created = await app.request("POST", "/v1/campaigns", {
      key: acct.key,
      body: { name: "Trunk zero", agent_id: agentId, contacts: [{ phone: LISTED_WITH_TRUNK_ZERO, timezone: "Europe/London" }], settings: { calling_hours: { start: "00:00", end: "24:00" } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // The runner runs only with the media engine; this test needs no call placed, only its pass.
    const runner = app.parley.services.campaignRunner;
    runner.start();
    const contactsAfterAPass = async () => {
      for (let waited = 0; waited < 10_000; waited += 25) {
        const campaign = await app.request("GET", `/v1/campaigns/${created.body.id}`, { key: acct.key });
        if (campaign.body.status !== "scheduled" && campaign.body.contacts.pending === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return app.request("GET", `/v1/campaigns/${created.body.id}/contacts`, { key: acct.key });
    };
    const contacts = await contactsAfterAPass().finally(() => runner.stop());
    expect(contacts.body.data).toMatchObject([{ phone: LISTED, status: "skipped", reason: "do_not_call", attempts: 0, calls: [] }]);
    expect(await db().selectFrom("calls").select("id").where("campaign_id", "=", created.body.id).execute()).toEqual([]);
  });
});

describe("numbers that cannot be are refused, naming the field", () => {
  it.each([
    ["POST", "/v1/calls", (n: string) => ({ phone_number: n, agent_id: "agt_x" }), "phone_number", "invalid_phone_number"],
    ["POST", "/v1/calls", (n: string) => ({ phone_number: "+14155550123", from_number: n, agent_id: "agt_x" }), "from_number", "invalid_from_number"],
    ["POST", "/v1/do-not-call", (n: string) => ({ phone_number: n }), "phone_number", "invalid_phone_number"],
    ["POST", "/v1/phone-numbers", (n: string) => ({ phone_number: n, country: "GB" }), "phone_number", "invalid_phone_number"],
    ["POST", "/v1/campaigns", (n: string) => ({ name: "x", agent_id: "agt_x", contacts: [{ phone: n }] }), "contacts[0].phone", "invalid_phone_number"],
    ["PATCH", "/v1/appointments/{id}", (n: string) => ({ customer_phone: n }), "customer_phone", "invalid_phone_number"],
  ])("%s %s: %s", async (method, pathTemplate, body, field, code) => {
    const path = pathTemplate.replace("{id}", (await appointment()).id);
    for (const [number, why] of [
      ["+4477009", "is not a possible number for GB \\(too short\\)"],
      ["+44077009001234", "is not a possible number for GB \\(too long\\)"],
    ] as const) {
      const res = await app.request(method as "POST" | "PATCH", path, { key: acct.key, body: body(number) });
      expectRefused(res, code, field, new RegExp(`^${field.replace(/[[\]]/g, "\\$&")}: \\${number} ${why}$`));
    }
  });

  it("an agent's transfer_number", async () => {
    const res = await app.request("PATCH", `/v1/agents/${agentId}`, { key: acct.key, body: { transfer_number: "+4477009" } });
    expectRefused(res, "invalid_request", "transfer_number", /^transfer_number: \+4477009 is not a possible number for GB \(too short\)$/);
  });

  it("accepts possible numbers no one is assigned: 555-01XX and the simulator's", async () => {
    for (const number of ["+15555550123", "+15005551234", ...Object.keys(SIMULATOR_MAGIC_NUMBERS)]) {
      const res = await call(number);
      expect(res.status, `${number}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.phone_number).toBe(number);
    }
  });
});

describe("every stored number is canonical", () => {
  it("calls, the call list's filter, agents' transfer numbers and appointments", async () => {
    const placed = await call("+4407700900124");
    expect(placed.status).toBe(200);
    expect(placed.body.phone_number).toBe("+447700900124");
    const listed = await app.request("GET", `/v1/calls?phone_number=${encodeURIComponent("+4407700900124")}`, { key: acct.key });
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([placed.body.id]);
    const agent = await app.request("PATCH", `/v1/agents/${agentId}`, { key: acct.key, body: { transfer_number: "+4402071838751" } });
    expect(agent.status).toBe(200);
    expect(agent.body.transfer_number).toBe("+442071838751");
    const changed = await app.request("PATCH", `/v1/appointments/${(await appointment()).id}`, { key: acct.key, body: { customer_phone: "+4407700900125" } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.customer_phone).toBe("+447700900125");
  });

  it("a campaign's contacts: one number in two spellings is a repeat", async () => {
    const res = await app.request("POST", "/v1/campaigns", { key: acct.key, body: { name: "Twice", agent_id: agentId, contacts: [{ phone: "+447700900130" }, { phone: "+4407700900130" }] } });
    expectRefused(res, "invalid_request", "contacts[1]", /phone \+447700900130 repeats contacts\[0\]\.phone/);
  });

  it("a phone number claimed in another spelling is the same number (409 phone_number_in_use)", async () => {
    const claimed = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: "+4402071838760", country: "GB" } });
    expect(claimed.status).toBe(201);
    expect(claimed.body.phone_number).toBe("+442071838760");
    const again = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: "+442071838760", country: "GB" } });
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe("phone_number_in_use");
  });
});

describe("the destination guard reads the number dialled", () => {
  let guarded: TestApp;
  afterAll(async () => {
    await guarded?.close();
  });

  it("a prefix allows the number however it is written (PARLEY_CALL_PREFIXES=+447)", async () => {
    guarded = await startTestApp({}, { PARLEY_CALL_PREFIXES: "+447" });
    const account = await guarded.account();
    await guarded.activeNumber(account.key, { phone_number: "+442071838750", country: "GB" });
    const agent = await guarded.request("POST", "/v1/agents", { key: account.key, body: { name: "Ava", system_prompt: "You call customers.", voice_id: "flite-slt" } });
    const place = (phone_number: string) => guarded.request("POST", "/v1/calls", { key: account.key, body: { phone_number, agent_id: agent.body.id } });
    expect((await place("+4407700900126")).status).toBe(200);
    const landline = await place("+4402071838799");
    expectRefused(landline, "invalid_phone_number", "phone_number", /calls to \+44 are not allowed/);
  });
});
