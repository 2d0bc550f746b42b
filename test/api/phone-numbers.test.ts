import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfUtcMonth } from "../../src/core/time.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;

const agentBody = { name: "Receptionist", system_prompt: "You answer calls for a dental clinic.", voice_id: "flite-slt" };

// Numbers are unique across accounts while held, so every test takes fresh ones.
let serial = 1000;
const freshNumber = () => `+1415555${String(serial++).padStart(4, "0")}`;

const register = (body: Record<string, unknown>, key = acct.key) => app.request("POST", "/v1/phone-numbers", { key, body });

async function registered(body: Record<string, unknown> = {}, key = acct.key) {
  const res = await register({ phone_number: freshNumber(), country: "US", ...body }, key);
  expect(res.status).toBe(201);
  return res.body;
}

async function agentOf(key: string): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key, body: agentBody });
  expect(res.status).toBe(201);
  return res.body.id;
}

function expectFieldError(res: ApiResponse, status: number, code: string, field: string) {
  expect(res.status).toBe(status);
  const error = errorOf(res);
  expect(error.code).toBe(code);
  expect(error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  expect(error.message).toContain(field);
}

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

describe("POST /v1/phone-numbers", () => {
  it("registers a pending number with defaults", async () => {
    const number = freshNumber();
    const res = await register({ phone_number: number, country: "us" });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^pn_[0-9A-Za-z]{20}$/);
    expect(res.body).toEqual({
      id: res.body.id,
      phone_number: number,
      friendly_name: number,
      country: "US",
      region: null,
      capabilities: { voice: true, sms: false },
      // A claim has no carrier of its own: the service's default (PARLEY_CARRIER).
      carrier: app.config.carrier,
      status: "pending",
      default_agent_id: null,
      created_at: res.body.created_at,
      updated_at: res.body.created_at,
    });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const read = await app.request("GET", `/v1/phone-numbers/${res.body.id}`, { key: acct.key });
    expect(read.body).toEqual(res.body);
  });

  it("stores every given field", async () => {
    const agentId = await agentOf(acct.key);
    const res = await register({
      phone_number: "+442071838750",
      friendly_name: "  London office ",
      country: "gb",
      region: "LND",
      capabilities: { sms: true },
      default_agent_id: agentId,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      phone_number: "+442071838750",
      friendly_name: "London office",
      country: "GB",
      region: "LND",
      capabilities: { voice: true, sms: true },
      default_agent_id: agentId,
    });
  });

  it.each([
    [{ country: "US" }, "invalid_phone_number", "phone_number"],
    [{ phone_number: "4155550100", country: "US" }, "invalid_phone_number", "phone_number"],
    [{ phone_number: "+1 415 555 0100", country: "US" }, "invalid_phone_number", "phone_number"],
    [{ phone_number: 14155550100, country: "US" }, "invalid_phone_number", "phone_number"],
    [{ phone_number: "+14155550199" }, "invalid_country", "country"],
    [{ phone_number: "+14155550199", country: "USA" }, "invalid_country", "country"],
    [{ phone_number: "+14155550199", country: "ZZ" }, "invalid_country", "country"],
    [{ phone_number: "+14155550199", country: "UK" }, "invalid_country", "country"],
    [{ phone_number: "+14155550199", country: "US", capabilities: { voice: "yes" } }, "invalid_request", "capabilities.voice"],
    [{ phone_number: "+14155550199", country: "US", capabilities: { fax: true } }, "invalid_request", "capabilities.fax"],
    [{ phone_number: "+14155550199", country: "US", friendly_name: "  " }, "invalid_request", "friendly_name"],
    [{ phone_number: "+14155550199", country: "US", friendly_name: "x".repeat(101) }, "invalid_request", "friendly_name"],
    [{ phone_number: "+14155550199", country: "US", region: "x".repeat(65) }, "invalid_request", "region"],
    [{ phone_number: "+14155550199", country: "US", default_agent_id: "" }, "invalid_request", "default_agent_id"],
    [{ phone_number: "+14155550199", country: "US", number_type: "local" }, "invalid_request", "number_type"],
  ])("refuses %j with %s naming %s", async (body, code, field) => {
    expectFieldError(await register(body), 400, code, field);
  });

  it("refuses a default agent that is unknown, deleted (404) or another account's (403)", async () => {
    const unknown = await register({ phone_number: freshNumber(), country: "US", default_agent_id: "agent_doesnotexist" });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).code).toBe("agent_not_found");

    const deleted = await agentOf(acct.key);
    expect((await app.request("DELETE", `/v1/agents/${deleted}`, { key: acct.key })).status).toBe(200);
    const gone = await register({ phone_number: freshNumber(), country: "US", default_agent_id: deleted });
    expect(gone.status).toBe(404);
    expect(errorOf(gone).code).toBe("agent_not_found");

    const other = await app.account();
    const foreign = await register({ phone_number: freshNumber(), country: "US", default_agent_id: await agentOf(other.key) });
    expect(foreign.status).toBe(403);
    expect(errorOf(foreign).code).toBe("unauthorized");
  });

  it("refuses a number this account has, or another account holds active, with 409 phone_number_in_use, until it is released", async () => {
    const other = await app.account();
    const mine = await registered();
    await app.approveNumber(mine.id);
    const again = await register({ phone_number: mine.phone_number, country: "US" });
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe("phone_number_in_use");
    expect(errorOf(again).message).toContain(mine.id);

    const theirs = await register({ phone_number: mine.phone_number, country: "US" }, other.key);
    expect(theirs.status).toBe(409);
    expect(errorOf(theirs).code).toBe("phone_number_in_use");
    expect(errorOf(theirs).message).not.toContain(mine.id);

    expect((await app.request("DELETE", `/v1/phone-numbers/${mine.id}`, { key: acct.key })).status).toBe(200);
    const claimed = await register({ phone_number: mine.phone_number, country: "US" }, other.key);
    expect(claimed.status).toBe(201);
    expect(claimed.body.status).toBe("pending");
  });
});

describe("numbers claimed through the API stay pending until the operator approves them", () => {
  const agentBodyFor = { name: "Caller", system_prompt: "You call people.", voice_id: "flite-slt" };

  it("a new number is pending: not a from_number, no wider destination guard, no inbound routing", async () => {
    const who = await app.account();
    const agentId = (await app.request("POST", "/v1/agents", { key: who.key, body: agentBodyFor })).body.id;
    const home = await registered({ default_agent_id: agentId }, who.key);
    expect(home.status).toBe("pending");
    const abroad = await registered({ phone_number: "+882164440001", country: "GB", default_agent_id: agentId }, who.key);
    expect(abroad.status).toBe("pending");
    const numbers = app.parley.services.phoneNumbers;

    // Not a from_number, neither named nor by default.
    const named = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550123", agent_id: agentId, from_number: home.phone_number } });
    expectFieldError(named, 400, "invalid_from_number", "from_number");
    const byDefault = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550123", agent_id: agentId } });
    expectFieldError(byDefault, 400, "invalid_from_number", "from_number");
    expect(errorOf(byDefault).message).toContain("approve");
    // Not routed: the lookups of the SIP gateway (any account) and the Twilio endpoint (this account).
    expect(await numbers.findActiveAnywhere(home.phone_number)).toBeUndefined();
    expect(await numbers.findActiveByNumber(who.id, home.phone_number)).toBeUndefined();

    // Approved, the +1 number calls and routes; the pending +882 one still widens nothing.
    await app.approveNumber(home.id);
    expect((await app.request("GET", `/v1/phone-numbers/${home.id}`, { key: who.key })).body.status).toBe("active");
    expect((await numbers.findActiveAnywhere(home.phone_number))?.id).toBe(home.id);
    expect((await numbers.findActiveByNumber(who.id, home.phone_number))?.id).toBe(home.id);
    const premium = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+882164449999", agent_id: agentId } });
    expectFieldError(premium, 400, "invalid_phone_number", "phone_number");
    expect(errorOf(premium).message).toContain("allowed: +1)");
    const transferAbroad = await app.request("PATCH", `/v1/agents/${agentId}`, { key: who.key, body: { transfer_enabled: true, transfer_number: "+882164449999" } });
    expectFieldError(transferAbroad, 400, "invalid_phone_number", "transfer_number");
    const placed = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550123", agent_id: agentId } });
    expect(placed.status).toBe(200);
    expect(placed.body.from_number).toBe(home.phone_number);
  });

  it("several accounts may claim a number; the approved one holds it, the others cannot be approved nor claim it again", async () => {
    const [first, second, third] = [await app.account(), await app.account(), await app.account()];
    const number = freshNumber();
    const claim = (who: TestAccount) => register({ phone_number: number, country: "US" }, who.key);
    const a = await claim(first);
    const b = await claim(second);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect([a.body.status, b.body.status]).toEqual(["pending", "pending"]);

    // One live row per account and number.
    const twice = await claim(first);
    expect(twice.status).toBe(409);
    expect(errorOf(twice).code).toBe("phone_number_in_use");
    expect(errorOf(twice).message).toContain(a.body.id);

    await app.approveNumber(b.body.id);
    // The number is active in `second` now: nobody else may claim it, and the message names no one.
    const late = await claim(third);
    expect(late.status).toBe(409);
    expect(errorOf(late).code).toBe("phone_number_in_use");
    expect(errorOf(late).message).not.toContain(b.body.id);
    expect(errorOf(late).message).not.toContain(second.id);
    await expect(app.approveNumber(a.body.id)).rejects.toThrow(`active in account ${second.id}`);
    expect((await app.request("GET", `/v1/phone-numbers/${a.body.id}`, { key: first.key })).body.status).toBe("pending");
    expect((await app.parley.services.phoneNumbers.findActiveAnywhere(number))?.account_id).toBe(second.id);
  });

  it("PATCH status: a client releases any of its numbers and re-activates only one the operator approved for it", async () => {
    const who = await app.account();
    const other = await app.account();
    const pending = await registered({}, who.key);
    const activate = (id: string, key = who.key) => app.request("PATCH", `/v1/phone-numbers/${id}`, { key, body: { status: "active" } });
    const refusal = await activate(pending.id);
    expect(refusal.status).toBe(409);
    expect(errorOf(refusal).code).toBe("phone_number_not_approved");
    expect(errorOf(refusal).message).toContain("parley admin number approve");
    expect((await app.request("GET", `/v1/phone-numbers/${pending.id}`, { key: who.key })).body.status).toBe("pending");

    // A withdrawn claim (released while pending) was never approved: it cannot come back either.
    expect((await app.request("PATCH", `/v1/phone-numbers/${pending.id}`, { key: who.key, body: { status: "inactive" } })).body.status).toBe("inactive");
    expect(errorOf(await activate(pending.id)).code).toBe("phone_number_not_approved");

    // An approved number, released, comes back; pending claims of others do not stop it.
    const approved = await registered({}, who.key);
    await app.approveNumber(approved.id);
    expect((await app.request("DELETE", `/v1/phone-numbers/${approved.id}`, { key: who.key })).status).toBe(200);
    const rival = await register({ phone_number: approved.phone_number, country: "US" }, other.key);
    expect(rival.body.status).toBe("pending");
    const back = await activate(approved.id);
    expect(back.status).toBe(200);
    expect(back.body.status).toBe("active");

    // Once the rival's claim is approved (after a release), the old owner cannot take it back.
    expect((await app.request("DELETE", `/v1/phone-numbers/${approved.id}`, { key: who.key })).status).toBe(200);
    await app.approveNumber(rival.body.id);
    const taken = await activate(approved.id);
    expect(taken.status).toBe(409);
    expect(errorOf(taken).code).toBe("phone_number_in_use");
    expect(errorOf(taken).message).not.toContain(other.id);
  });
});

describe("GET /v1/phone-numbers", () => {
  let lister: TestAccount;
  const created: Array<{ id: string; country: string; status: string }> = [];

  beforeAll(async () => {
    lister = await app.account();
    const countries = ["US", "US", "GB", "US", "CA", "GB", "US"];
    for (const country of countries) {
      const res = await register({ phone_number: freshNumber(), country }, lister.key);
      expect(res.status).toBe(201);
      created.push(res.body);
    }
    // All approved but one, which stays pending; one released.
    for (const [i, number] of created.entries()) if (i !== 3) await app.approveNumber(number.id);
    const released = await app.request("DELETE", `/v1/phone-numbers/${created[1]!.id}`, { key: lister.key });
    expect(released.status).toBe(200);
  });

  it("lists full phone number objects, newest first", async () => {
    const res = await app.request("GET", "/v1/phone-numbers", { key: lister.key });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(7);
    expect(res.body.has_more).toBe(false);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data.map((n: { id: string }) => n.id)).toEqual(created.map((n) => n.id).reverse());
    const single = await app.request("GET", `/v1/phone-numbers/${created[6]!.id}`, { key: lister.key });
    expect(res.body.data[0]).toEqual(single.body);
  });

  it("walks every page to the end with the cursor, in both orders", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const qs: string = `limit=3&order=${order}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
        const res = await app.request("GET", `/v1/phone-numbers?${qs}`, { key: lister.key });
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(7);
        seen.push(...res.body.data.map((n: { id: string }) => n.id));
        cursor = res.body.has_more ? res.body.next_cursor : null;
        if (!res.body.has_more) expect(res.body.next_cursor).toBeNull();
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      const ids = created.map((n) => n.id);
      expect(seen).toEqual(order === "asc" ? ids : ids.reverse());
    }
  });

  it("filters by status and by country in any case, total counting the filter", async () => {
    const byStatus = async (status: string) => (await app.request("GET", `/v1/phone-numbers?status=${status}`, { key: lister.key })).body;
    expect((await byStatus("active")).total).toBe(5);
    expect((await byStatus("inactive")).data.map((n: { id: string }) => n.id)).toEqual([created[1]!.id]);
    expect((await byStatus("pending")).data.map((n: { id: string }) => n.id)).toEqual([created[3]!.id]);

    const gb = await app.request("GET", "/v1/phone-numbers?country=gb", { key: lister.key });
    expect(gb.body.total).toBe(2);
    expect(gb.body.data.every((n: { country: string }) => n.country === "GB")).toBe(true);
    const activeUs = await app.request("GET", "/v1/phone-numbers?country=US&status=active&limit=1", { key: lister.key });
    expect(activeUs.body.total).toBe(2);
    expect(activeUs.body.has_more).toBe(true);
    const fr = await app.request("GET", "/v1/phone-numbers?country=FR", { key: lister.key });
    expect(fr.body).toEqual({ data: [], has_more: false, next_cursor: null, total: 0 });
  });

  it("refuses bad filters, bad limits and cursors of another filter", async () => {
    expectFieldError(await app.request("GET", "/v1/phone-numbers?status=sold", { key: lister.key }), 400, "invalid_status", "status");
    for (const country of ["usa", "U", "ZZ", "1"]) {
      expectFieldError(await app.request("GET", `/v1/phone-numbers?country=${country}`, { key: lister.key }), 400, "invalid_country", "country");
    }
    for (const limit of ["0", "101", "x"]) {
      expectFieldError(await app.request("GET", `/v1/phone-numbers?limit=${limit}`, { key: lister.key }), 400, "invalid_request", "limit");
    }
    expectFieldError(await app.request("GET", "/v1/phone-numbers?area=415", { key: lister.key }), 400, "invalid_request", "area");
    const first = await app.request("GET", "/v1/phone-numbers?limit=2", { key: lister.key });
    const cursor = encodeURIComponent(first.body.next_cursor);
    expectFieldError(await app.request("GET", `/v1/phone-numbers?limit=2&country=US&cursor=${cursor}`, { key: lister.key }), 400, "invalid_cursor", "cursor");
    expectFieldError(await app.request("GET", `/v1/agents?cursor=${cursor}`, { key: lister.key }), 400, "invalid_cursor", "cursor");
    expectFieldError(await app.request("GET", "/v1/phone-numbers?cursor=garbage", { key: lister.key }), 400, "invalid_cursor", "cursor");
  });

  it("never shows another account's numbers", async () => {
    const other = await app.account();
    const res = await app.request("GET", "/v1/phone-numbers", { key: other.key });
    expect(res.body.total).toBe(0);
  });
});

describe("GET /v1/phone-numbers/{id}", () => {
  it("adds stats and the 10 most recent calls when asked", async () => {
    const owner = await app.account();
    const agentId = await agentOf(owner.key);
    const number = await registered({}, owner.key);
    const db = app.parley.services.db;
    const base = { account_id: owner.id, agent_id: agentId };
    const thisMonth = new Date(Date.parse(startOfUtcMonth(new Date())) + 1000).toISOString();
    // Outbound from the number and inbound to it count; other numbers, web calls and other accounts do not.
    await insertCallRow(db, { ...base, from_number: number.phone_number, status: "completed", duration: 61, created_at: "2020-01-01T00:00:00.000Z" });
    await insertCallRow(db, { ...base, direction: "inbound", phone_number: number.phone_number, from_number: "+14155550999", status: "completed", duration: 30, created_at: thisMonth });
    await insertCallRow(db, { ...base, from_number: number.phone_number, status: "no_answer", duration: null, created_at: thisMonth });
    await insertCallRow(db, { ...base, from_number: number.phone_number, status: "completed", duration: 120, created_at: thisMonth });
    await insertCallRow(db, { ...base, from_number: "+14155550000", status: "completed", duration: 600, created_at: thisMonth });
    await insertCallRow(db, { ...base, direction: "inbound", phone_number: "+14155550000", from_number: number.phone_number, status: "completed", duration: 600, created_at: thisMonth });
    const other = await app.account();
    await insertCallRow(db, { account_id: other.id, agent_id: "agent_x", from_number: number.phone_number, status: "completed", duration: 600, created_at: thisMonth });

    const res = await app.request("GET", `/v1/phone-numbers/${number.id}?include=stats`, { key: owner.key });
    expect(res.status).toBe(200);
    // 61 s bills 2 minutes, 30 s 1, 120 s 2; unanswered calls bill nothing.
    expect(res.body.stats).toEqual({ total_calls: 4, total_minutes: 5, calls_this_month: 3, minutes_this_month: 3 });
    expect(res.body).not.toHaveProperty("recent_calls");

    const newest: string[] = [];
    for (let i = 0; i < 11; i++) {
      const row = await insertCallRow(db, { ...base, from_number: number.phone_number, status: "queued", created_at: `2030-01-01T00:00:${String(i).padStart(2, "0")}.000Z` });
      newest.unshift(row.id);
    }
    const both = await app.request("GET", `/v1/phone-numbers/${number.id}?include=recent_calls,stats`, { key: owner.key });
    expect(both.body.stats.total_calls).toBe(15);
    expect(both.body.recent_calls.map((c: { id: string }) => c.id)).toEqual(newest.slice(0, 10));
    expect(Object.keys(both.body.recent_calls[0]).sort()).toEqual(
      ["agent_id", "created_at", "direction", "duration", "ended_at", "from_number", "id", "metadata", "phone_number", "status"],
    );

    const plain = await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: owner.key });
    expect(plain.body).toEqual(number);
    expectFieldError(await app.request("GET", `/v1/phone-numbers/${number.id}?include=calls`, { key: owner.key }), 400, "invalid_request", "include");
  });

  it("gives zero stats and no recent calls to a number without calls", async () => {
    const number = await registered();
    const res = await app.request("GET", `/v1/phone-numbers/${number.id}?include=stats,recent_calls`, { key: acct.key });
    expect(res.body.stats).toEqual({ total_calls: 0, total_minutes: 0, calls_this_month: 0, minutes_this_month: 0 });
    expect(res.body.recent_calls).toEqual([]);
  });
});

describe("PATCH and DELETE /v1/phone-numbers/{id}", () => {
  it("updates only the given fields and moves updated_at", async () => {
    const number = await registered({ friendly_name: "Main line", region: "CA" });
    await app.approveNumber(number.id);
    Object.assign(number, (await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: acct.key })).body);
    const agentId = await agentOf(acct.key);
    const res = await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body: { default_agent_id: agentId } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...number, default_agent_id: agentId, updated_at: res.body.updated_at });
    expect(res.body.updated_at > number.updated_at).toBe(true);

    const renamed = await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body: { friendly_name: "Support", default_agent_id: null } });
    expect(renamed.body).toMatchObject({ friendly_name: "Support", default_agent_id: null, region: "CA" });
    expect(renamed.body.updated_at > res.body.updated_at).toBe(true);

    const off = await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body: { status: "inactive" } });
    expect(off.body.status).toBe("inactive");
    const on = await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body: { status: "active" } });
    expect(on.body.status).toBe("active");
    const read = await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: acct.key });
    expect(read.body).toEqual(on.body);
  });

  it.each([
    [{ status: "pending" }, "invalid_status", "status"],
    [{ status: "gone" }, "invalid_status", "status"],
    [{ friendly_name: "" }, "invalid_request", "friendly_name"],
    [{ region: "NY" }, "invalid_request", "region"],
    [{ capabilities: { sms: true } }, "invalid_request", "capabilities"],
  ])("refuses %j with %s naming %s", async (body, code, field) => {
    const number = await registered();
    expectFieldError(await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body }), 400, code, field);
  });

  it("refuses a default agent that is unknown (404) or another account's (403)", async () => {
    const number = await registered();
    const unknown = await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body: { default_agent_id: "agent_nope" } });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).code).toBe("agent_not_found");
    const other = await app.account();
    const foreign = await app.request("PATCH", `/v1/phone-numbers/${number.id}`, { key: acct.key, body: { default_agent_id: await agentOf(other.key) } });
    expect(foreign.status).toBe(403);
    expect(errorOf(foreign).code).toBe("unauthorized");
    expect((await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: acct.key })).body.default_agent_id).toBeNull();
  });

  it("releases a number: it stays readable as inactive, and releasing again changes nothing", async () => {
    const number = await registered();
    const res = await app.request("DELETE", `/v1/phone-numbers/${number.id}`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: number.id, deleted: true });
    const read = await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: acct.key });
    expect(read.status).toBe(200);
    expect(read.body.status).toBe("inactive");
    const again = await app.request("DELETE", `/v1/phone-numbers/${number.id}`, { key: acct.key });
    expect(again.status).toBe(200);
    expect((await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: acct.key })).body).toEqual(read.body);
  });

  it("answers 404 phone_number_not_found for unknown ids and 403 unauthorized for another account's", async () => {
    const number = await registered();
    const other = await app.account();
    const cases = [
      ["GET", undefined],
      ["PATCH", { friendly_name: "x" }],
      ["DELETE", undefined],
    ] as const;
    for (const [method, body] of cases) {
      const missing = await app.request(method, "/v1/phone-numbers/pn_doesnotexist", { key: acct.key, body });
      expect(missing.status).toBe(404);
      expect(errorOf(missing).code).toBe("phone_number_not_found");
      const foreign = await app.request(method, `/v1/phone-numbers/${number.id}`, { key: other.key, body });
      expect(foreign.status).toBe(403);
      expect(errorOf(foreign).code).toBe("unauthorized");
    }
    expect((await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: acct.key })).body).toEqual(number);
  });
});

describe("permissions", () => {
  it("needs numbers:read to read and numbers:write to change", async () => {
    const number = await registered();
    const reader = await app.key(acct.id, ["numbers:read"]);
    expect((await app.request("GET", "/v1/phone-numbers", { key: reader })).status).toBe(200);
    expect((await app.request("GET", `/v1/phone-numbers/${number.id}`, { key: reader })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "/v1/phone-numbers", { phone_number: freshNumber(), country: "US" }],
      ["PATCH", `/v1/phone-numbers/${number.id}`, { friendly_name: "x" }],
      ["DELETE", `/v1/phone-numbers/${number.id}`, undefined],
    ] as const) {
      const res = await app.request(method, path, { key: reader, body });
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe("forbidden");
    }
    const callsOnly = await app.key(acct.id, ["calls:write"]);
    const denied = await app.request("GET", "/v1/phone-numbers", { key: callsOnly });
    expect(denied.status).toBe(403);
    expect(errorOf(denied).code).toBe("forbidden");
    const writer = await app.key(acct.id, ["numbers:write"]);
    expect((await app.request("GET", "/v1/phone-numbers", { key: writer })).status).toBe(200);
  });

  it("documents the operations and phone_number_in_use as 409 in the OpenAPI document", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    expect(Object.keys(doc.paths["/v1/phone-numbers"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/v1/phone-numbers/{phone_number_id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(doc.paths["/v1/phone-numbers"].post.responses["409"].description).toContain("phone_number_in_use");
    expect(doc.paths["/v1/phone-numbers/{phone_number_id}"].patch.responses["409"].description).toContain("phone_number_not_approved");
    expect(doc.paths["/v1/phone-numbers"].post.responses["201"]).toBeDefined();
  });
});
