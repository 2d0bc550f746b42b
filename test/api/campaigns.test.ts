import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;
let agentId: string;

const agentBody = { name: "Caller", system_prompt: "You call customers to confirm appointments.", voice_id: "flite-slt" };
const phone = (i: number) => `+1415555${String(i).padStart(4, "0")}`;
const contacts = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ phone: phone(from + i) }));
const CAMPAIGN_FIELDS = [
  "agent_id", "attempts", "contacts", "created_at", "estimated_finish_at", "finished_at", "id", "name", "paused_reason", "settings", "started_at", "status", "updated_at",
];
/** Contact counts: every status, zero unless given. */
const counts = (given: Record<string, number>) => ({
  pending: 0, calling: 0, completed: 0, no_answer: 0, busy: 0, failed: 0, skipped: 0, cancelled: 0, do_not_call: 0, ...given,
});
const DEFAULT_HOURS = { start: "08:00", end: "21:00", days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] };

async function newAgent(key: string): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key, body: agentBody });
  expect(res.status).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  agentId = await newAgent(acct.key);
});
afterAll(async () => {
  await app.close();
});

const create = (body: Record<string, unknown>, key = acct.key) => app.request("POST", "/v1/campaigns", { key, body: { agent_id: agentId, ...body } });
const fieldsOf = (res: ApiResponse) => errorOf(res).details.fields.map((f: { field: string }) => f.field);
const db = () => app.parley.services.db;

describe("POST /v1/campaigns", () => {
  it("stores a scheduled campaign and its contacts, with the default settings", async () => {
    const res = await create({
      name: "  Spring reminders ",
      contacts: [{ phone: "+14155550101", context: { name: "Ana" } }, { phone: "+14155550102" }, { phone: "+442071838750", context: {} }],
    });
    expect(res.status).toBe(201);
    const campaign = res.body;
    expect(campaign.id).toMatch(/^cmp_[0-9A-Za-z]{20}$/);
    expect(Object.keys(campaign).sort()).toEqual(CAMPAIGN_FIELDS);
    expect(campaign).toMatchObject({
      name: "Spring reminders",
      agent_id: agentId,
      status: "scheduled",
      paused_reason: null,
      settings: { max_concurrent: 5, retry_no_answer: false, schedule: null, from_number: null, max_attempts: 3, retry_delay_minutes: 60, calling_hours: DEFAULT_HOURS, timezone: null },
      contacts: counts({ total: 3, pending: 3 }),
      attempts: 0,
      started_at: null,
      finished_at: null,
      estimated_finish_at: null,
    });
    expect(campaign.updated_at).toBe(campaign.created_at);

    const rows = await db().selectFrom("campaign_contacts").selectAll().where("campaign_id", "=", campaign.id).orderBy("position").execute();
    expect(rows.map((r) => [r.position, r.phone, JSON.parse(r.context), r.status, r.call_id, r.attempts])).toEqual([
      [0, "+14155550101", { name: "Ana" }, "pending", null, 0],
      [1, "+14155550102", {}, "pending", null, 0],
      [2, "+442071838750", {}, "pending", null, 0],
    ]);
    expect(rows.every((r) => r.id.startsWith("cc_"))).toBe(true);
    const stored = await db().selectFrom("campaigns").selectAll().where("id", "=", campaign.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ account_id: acct.id, contact_count: 3, status: "scheduled" });
  });

  it("keeps the given settings, with the start time normalised to UTC", async () => {
    const res = await create({
      name: "Later",
      contacts: contacts(2),
      settings: { max_concurrent: 10, retry_no_answer: true, schedule: "2030-01-15T09:30:00+02:00" },
    });
    expect(res.status).toBe(201);
    expect(res.body.settings).toEqual({
      max_concurrent: 10,
      retry_no_answer: true,
      schedule: "2030-01-15T07:30:00.000Z",
      from_number: null,
      max_attempts: 3,
      retry_delay_minutes: 60,
      calling_hours: DEFAULT_HOURS,
      timezone: null,
    });
    expect(res.body.status).toBe("scheduled");
    const explicitNull = await create({ name: "Now", contacts: contacts(1), settings: { schedule: null } });
    expect(explicitNull.body.settings.schedule).toBeNull();
  });

  it("caps max_concurrent at the account's concurrent-call limit, and lowers the default to it", async () => {
    const over = await create({ name: "Too many", contacts: contacts(1), settings: { max_concurrent: 11 } });
    expect(over.status).toBe(400);
    expect(errorOf(over).code).toBe("invalid_request");
    expect(errorOf(over).message).toBe("settings.max_concurrent: must be at most 10, the account's concurrent-call limit");
    expect(fieldsOf(over)).toEqual(["settings.max_concurrent"]);

    const small = await app.account();
    await app.parley.services.accounts.setLimits(small.id, { concurrentCalls: 2 });
    const res = await create({ name: "Small", agent_id: await newAgent(small.key), contacts: contacts(1) }, small.key);
    expect(res.status).toBe(201);
    expect(res.body.settings.max_concurrent).toBe(2);
  });

  it("accepts 10,000 contacts and refuses 10,001", async () => {
    const big = await create({ name: "Big", contacts: contacts(10_000) });
    expect(big.status).toBe(201);
    expect(big.body.contacts).toMatchObject({ total: 10_000, pending: 10_000 });
    const read = await app.request("GET", `/v1/campaigns/${big.body.id}?include=contacts`, { key: acct.key });
    expect(read.body.contacts.data).toHaveLength(10_000);
    expect(read.body.contacts.data[9_999].phone).toBe(phone(9_999));

    const tooBig = await create({ name: "Too big", contacts: contacts(10_001) });
    expect(tooBig.status).toBe(400);
    expect(errorOf(tooBig).code).toBe("invalid_request");
    expect(errorOf(tooBig).message).toBe("contacts: must hold at most 10000 contacts");
  });

  it("names every bad phone number, up to 100 of them", async () => {
    const list = [{ phone: "+14155550001" }, { phone: "4155550002" }, { phone: "+14155550003" }, { phone: "+1 415 555 0004" }];
    const res = await create({ name: "Bad", contacts: list });
    expect(res.status).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe("invalid_phone_number");
    expect(error.message).toContain("contacts[1].phone");
    expect(fieldsOf(res)).toEqual(["contacts[1].phone", "contacts[3].phone"]);

    const many = await create({ name: "Many bad", contacts: Array.from({ length: 250 }, (_, i) => ({ phone: `555-${i}` })) });
    expect(errorOf(many).code).toBe("invalid_phone_number");
    expect(fieldsOf(many)).toHaveLength(100);
    expect(fieldsOf(many)[99]).toBe("contacts[99].phone");
    expect(await db().selectFrom("campaigns").select("id").where("name", "in", ["Bad", "Many bad"]).execute()).toEqual([]);
  });

  it("refuses a number listed twice, naming both positions", async () => {
    const res = await create({ name: "Dupes", contacts: [{ phone: "+14155550001" }, { phone: "+14155550002" }, { phone: "+14155550001" }] });
    expect(res.status).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("contacts[2]");
    expect(error.message).toContain("contacts[0].phone");
    expect(fieldsOf(res)).toEqual(["contacts[2]"]);
  });

  it.each([
    [{ contacts: contacts(1) }, "invalid_request", "name"],
    [{ name: " ", contacts: contacts(1) }, "invalid_request", "name"],
    [{ name: "n".repeat(201), contacts: contacts(1) }, "invalid_request", "name"],
    [{ name: "x" }, "invalid_request", "contacts"],
    [{ name: "x", contacts: [] }, "invalid_request", "contacts"],
    [{ name: "x", contacts: "+14155550001" }, "invalid_request", "contacts"],
    [{ name: "x", contacts: ["+14155550001"] }, "invalid_request", "contacts[0]"],
    [{ name: "x", contacts: [{}] }, "invalid_phone_number", "contacts[0].phone"],
    [{ name: "x", contacts: [{ phone: 14155550001 }] }, "invalid_phone_number", "contacts[0].phone"],
    [{ name: "x", contacts: [{ phone: "+14155550001", context: "vip" }] }, "invalid_request", "contacts[0].context"],
    [{ name: "x", contacts: [{ phone: "+14155550001", name: "Ana" }] }, "invalid_request", "contacts[0].name"],
    [{ name: "x", contacts: contacts(1), settings: { max_concurrent: 0 } }, "invalid_request", "settings.max_concurrent"],
    [{ name: "x", contacts: contacts(1), settings: { max_concurrent: 51 } }, "invalid_request", "settings.max_concurrent"],
    [{ name: "x", contacts: contacts(1), settings: { max_concurrent: 2.5 } }, "invalid_request", "settings.max_concurrent"],
    [{ name: "x", contacts: contacts(1), settings: { retry_no_answer: "yes" } }, "invalid_request", "settings.retry_no_answer"],
    [{ name: "x", contacts: contacts(1), settings: { schedule: "next tuesday" } }, "invalid_date_format", "settings.schedule"],
    [{ name: "x", contacts: contacts(1), settings: { schedule: "2030-02-30T09:00:00Z" } }, "invalid_date_format", "settings.schedule"],
    [{ name: "x", contacts: contacts(1), settings: { schedule: 1893456000 } }, "invalid_date_format", "settings.schedule"],
    [{ name: "x", contacts: contacts(1), settings: { speed: "fast" } }, "invalid_request", "settings.speed"],
    [{ name: "x", contacts: contacts(1), settings: [] }, "invalid_request", "settings"],
    [{ name: "x", contacts: contacts(1), schedule: "2030-01-01T00:00:00Z" }, "invalid_request", "schedule"],
    [{ name: "x", contacts: contacts(1), agent_id: 7 }, "invalid_request", "agent_id"],
  ])("refuses %j with %s naming %s", async (body, code, field) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe(code);
    expect(fieldsOf(res)).toContain(field);
    expect(error.message).toContain(field);
  });

  it("answers 404 agent_not_found for an unknown, foreign or deleted agent, and 409 agent_inactive", async () => {
    const unknown = await create({ name: "x", contacts: contacts(1), agent_id: "agent_doesnotexist" });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).code).toBe("agent_not_found");

    const other = await app.account();
    const foreign = await create({ name: "x", contacts: contacts(1), agent_id: await newAgent(other.key) });
    expect(foreign.status).toBe(404);
    expect(errorOf(foreign).code).toBe("agent_not_found");

    const deletedId = await newAgent(acct.key);
    await app.request("DELETE", `/v1/agents/${deletedId}`, { key: acct.key });
    const deleted = await create({ name: "x", contacts: contacts(1), agent_id: deletedId });
    expect(deleted.status).toBe(404);
    expect(errorOf(deleted).code).toBe("agent_not_found");

    const inactiveId = await newAgent(acct.key);
    await app.request("PATCH", `/v1/agents/${inactiveId}`, { key: acct.key, body: { status: "inactive" } });
    const inactive = await create({ name: "x", contacts: contacts(1), agent_id: inactiveId });
    expect(inactive.status).toBe(409);
    expect(errorOf(inactive).code).toBe("agent_inactive");
    expect(errorOf(inactive).message).toContain(inactiveId);
  });

  it("needs campaigns:write", async () => {
    const reader = await app.key(acct.id, ["campaigns:read"]);
    const res = await create({ name: "x", contacts: contacts(1) }, reader);
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("forbidden");
    expect((await app.request("GET", "/v1/campaigns", { key: reader })).status).toBe(200);
  });
});

describe("GET /v1/campaigns", () => {
  let lister: TestAccount;
  let listerAgent: string;
  const names: string[] = [];
  const ids: string[] = [];

  beforeAll(async () => {
    lister = await app.account();
    listerAgent = await newAgent(lister.key);
    for (let i = 0; i < 5; i++) {
      names.push(`Campaign ${i}`);
      const res = await create({ name: `Campaign ${i}`, agent_id: listerAgent, contacts: contacts(i + 1) }, lister.key);
      expect(res.status).toBe(201);
      ids.push(res.body.id);
      // Creations in one millisecond would tie; distinct creation times make the expected order exact.
      const at = `2026-01-01T00:00:0${i}.000Z`;
      await db().updateTable("campaigns").set({ created_at: at, updated_at: at }).where("id", "=", res.body.id).execute();
    }
    await app.request("POST", `/v1/campaigns/${ids[1]}/pause`, { key: lister.key });
    await app.request("POST", `/v1/campaigns/${ids[3]}/cancel`, { key: lister.key });
  });

  it("lists full campaign objects with their counts, newest first", async () => {
    const res = await app.request("GET", "/v1/campaigns", { key: lister.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 5, has_more: false, next_cursor: null });
    expect(res.body.data.map((c: { name: string }) => c.name)).toEqual([...names].reverse());
    expect(Object.keys(res.body.data[0]).sort()).toEqual(CAMPAIGN_FIELDS);
    const byName = Object.fromEntries(res.body.data.map((c: { name: string; contacts: unknown }) => [c.name, c.contacts]));
    expect(byName["Campaign 2"]).toEqual(counts({ total: 3, pending: 3 }));
    expect(byName["Campaign 3"]).toEqual(counts({ total: 4, cancelled: 4 }));
  });

  it("walks every page to the end in both orders", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const qs: string = `limit=2&order=${order}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
        const res = await app.request("GET", `/v1/campaigns?${qs}`, { key: lister.key });
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(5);
        seen.push(...res.body.data.map((c: { name: string }) => c.name));
        cursor = res.body.has_more ? res.body.next_cursor : null;
      } while (cursor);
      expect(seen).toEqual(order === "asc" ? names : [...names].reverse());
    }
  });

  it("filters by status, and refuses an unknown status or a bad cursor", async () => {
    const status = async (s: string) => (await app.request("GET", `/v1/campaigns?status=${s}`, { key: lister.key })).body;
    expect((await status("scheduled")).data.map((c: { name: string }) => c.name)).toEqual(["Campaign 4", "Campaign 2", "Campaign 0"]);
    expect((await status("paused")).data.map((c: { name: string }) => c.name)).toEqual(["Campaign 1"]);
    expect((await status("cancelled")).total).toBe(1);
    expect((await status("running")).total).toBe(0);

    const bad = await app.request("GET", "/v1/campaigns?status=pending", { key: lister.key });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).code).toBe("invalid_status");
    expect(errorOf(bad).message).toContain("status");
    const cursor = await app.request("GET", "/v1/campaigns?cursor=nope", { key: lister.key });
    expect(errorOf(cursor).code).toBe("invalid_cursor");
  });

  it("shows only the caller's campaigns", async () => {
    const other = await app.account();
    expect((await app.request("GET", "/v1/campaigns", { key: other.key })).body).toMatchObject({ total: 0, data: [] });
  });
});

describe("GET /v1/campaigns/{id} and its state changes", () => {
  const campaignOf = async (n = 3) => (await create({ name: "States", contacts: contacts(n) })).body;
  const act = (id: string, action: string, key = acct.key) => app.request("POST", `/v1/campaigns/${id}/${action}`, { key });

  it("reads a campaign, with its contacts in calling order when asked", async () => {
    const created = (await create({ name: "Read me", contacts: [{ phone: "+14155550201", context: { first: "Ana" } }, { phone: "+14155550202" }] })).body;
    const plain = await app.request("GET", `/v1/campaigns/${created.id}`, { key: acct.key });
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual(created);

    const full = await app.request("GET", `/v1/campaigns/${created.id}?include=contacts`, { key: acct.key });
    expect(full.status).toBe(200);
    expect(full.body.contacts).toMatchObject({ total: 2, pending: 2 });
    expect(full.body.contacts.data).toEqual([
      { id: expect.stringMatching(/^cc_/), phone: "+14155550201", context: { first: "Ana" }, timezone: null, status: "pending", reason: null, call_id: null, attempts: 0, next_attempt_at: null },
      { id: expect.stringMatching(/^cc_/), phone: "+14155550202", context: {}, timezone: null, status: "pending", reason: null, call_id: null, attempts: 0, next_attempt_at: null },
    ]);

    const bad = await app.request("GET", `/v1/campaigns/${created.id}?include=calls`, { key: acct.key });
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad)).toEqual(["include"]);
  });

  it("pauses, resumes and cancels along the allowed transitions", async () => {
    const campaign = await campaignOf();
    const paused = await act(campaign.id, "pause");
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe("paused");
    expect(paused.body.updated_at > campaign.updated_at).toBe(true);

    const again = await act(campaign.id, "pause");
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe("invalid_campaign_state");
    expect(errorOf(again).message).toContain("paused");
    expect(errorOf(again).details).toEqual({ status: "paused" });

    const resumed = await act(campaign.id, "resume");
    expect(resumed.body.status).toBe("scheduled");
    const resumeScheduled = await act(campaign.id, "resume");
    expect(errorOf(resumeScheduled).code).toBe("invalid_campaign_state");
    expect(errorOf(resumeScheduled).details.status).toBe("scheduled");

    // `running` is the campaign runner's to set (a later issue): write it as it will.
    await db().updateTable("campaigns").set({ status: "running" }).where("id", "=", campaign.id).execute();
    expect((await act(campaign.id, "pause")).body.status).toBe("paused");
    expect((await act(campaign.id, "cancel")).body.status).toBe("cancelled");
  });

  it("cancels the contacts not yet dialled, and nothing moves a cancelled or completed campaign", async () => {
    const campaign = await campaignOf(4);
    const rows = await db().selectFrom("campaign_contacts").select("id").where("campaign_id", "=", campaign.id).orderBy("position").execute();
    await db().updateTable("campaign_contacts").set({ status: "completed", attempts: 1 }).where("id", "=", rows[0]!.id).execute();
    await db().updateTable("campaign_contacts").set({ status: "calling", attempts: 1 }).where("id", "=", rows[1]!.id).execute();

    const cancelled = await act(campaign.id, "cancel");
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect(cancelled.body.contacts).toEqual(counts({ total: 4, calling: 1, completed: 1, cancelled: 2 }));

    for (const action of ["pause", "resume", "cancel"]) {
      const res = await act(campaign.id, action);
      expect(res.status).toBe(409);
      expect(errorOf(res).code).toBe("invalid_campaign_state");
      expect(errorOf(res).message).toContain("cancelled");
    }

    const done = await campaignOf();
    await db().updateTable("campaigns").set({ status: "completed" }).where("id", "=", done.id).execute();
    for (const action of ["pause", "resume", "cancel"]) {
      expect(errorOf(await act(done.id, action)).details).toEqual({ status: "completed" });
    }
  });

  it("answers 404 campaign_not_found for unknown ids and 403 unauthorized for another account's", async () => {
    const campaign = await campaignOf();
    const other = await app.account();
    for (const [method, suffix] of [["GET", ""], ["POST", "/pause"], ["POST", "/resume"], ["POST", "/cancel"]] as const) {
      const missing = await app.request(method, `/v1/campaigns/cmp_doesnotexist${suffix}`, { key: acct.key });
      expect(missing.status).toBe(404);
      expect(errorOf(missing).code).toBe("campaign_not_found");
      const foreign = await app.request(method, `/v1/campaigns/${campaign.id}${suffix}`, { key: other.key });
      expect(foreign.status).toBe(403);
      expect(errorOf(foreign).code).toBe("unauthorized");
    }
    expect((await app.request("GET", `/v1/campaigns/${campaign.id}`, { key: acct.key })).body.status).toBe("scheduled");
  });

  it("takes no body on state changes and needs campaigns:write", async () => {
    const campaign = await campaignOf();
    const withBody = await app.request("POST", `/v1/campaigns/${campaign.id}/pause`, { key: acct.key, body: { reason: "lunch" } });
    expect(withBody.status).toBe(400);
    const reader = await app.key(acct.id, ["campaigns:read"]);
    expect(errorOf(await act(campaign.id, "pause", reader)).code).toBe("forbidden");
  });
});

describe("campaign contacts, results and the do-not-call list: who can reach them", () => {
  it("lists contacts with their calls, and refuses another account's campaign", async () => {
    const created = (await create({ name: "Mine", contacts: contacts(3, 300) })).body;
    const page = await app.request("GET", `/v1/campaigns/${created.id}/contacts?limit=2`, { key: acct.key });
    expect(page.status).toBe(200);
    expect(page.body.data.map((c: { phone: string }) => c.phone)).toEqual([phone(300), phone(301)]);
    expect(page.body.data[0].calls).toEqual([]);
    expect(page.body.total).toBe(3);
    const next = await app.request("GET", `/v1/campaigns/${created.id}/contacts?limit=2&cursor=${page.body.next_cursor}`, { key: acct.key });
    expect(next.body.data.map((c: { phone: string }) => c.phone)).toEqual([phone(302)]);
    expect(next.body.has_more).toBe(false);
    const filtered = await app.request("GET", `/v1/campaigns/${created.id}/contacts?status=completed`, { key: acct.key });
    expect(filtered.body).toMatchObject({ data: [], total: 0 });
    expect((await app.request("GET", `/v1/campaigns/${created.id}/contacts?status=done`, { key: acct.key })).status).toBe(400);

    const other = await app.account();
    for (const path of [`/v1/campaigns/${created.id}/contacts`, `/v1/campaigns/${created.id}/results.csv`]) {
      const res = await app.request("GET", path, { key: other.key });
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe("unauthorized");
    }
    expect((await app.request("GET", "/v1/campaigns/cmp_nope/results.csv", { key: acct.key })).status).toBe(404);
    const csv = await app.request("GET", `/v1/campaigns/${created.id}/results.csv`, { key: acct.key });
    expect(csv.status).toBe(200);
  });

  it("puts the calls' extracted data in results.csv only for a key that may also read calls", async () => {
    const created = (await create({ name: "Results", contacts: contacts(1, 400) })).body;
    const { db } = app.parley.services;
    const contact = await db.selectFrom("campaign_contacts").select("id").where("campaign_id", "=", created.id).executeTakeFirstOrThrow();
    const analysis = { source: "rules", summary: "s", outcome: "information_provided", success: true, sentiment: null, extracted_data: { patient_name: "Zebulon Quaxworth" } };
    const call = await insertCallRow(db, { account_id: acct.id, agent_id: agentId, campaign_id: created.id, contact_id: contact.id, analysis: JSON.stringify(analysis) });
    await db.updateTable("campaign_contacts").set({ call_id: call.id }).where("id", "=", contact.id).execute();
    const results = async (permissions: string[]) => (await app.request("GET", `/v1/campaigns/${created.id}/results.csv`, { key: await app.key(acct.id, permissions) })).body as string;

    const withCalls = await results(["campaigns:read", "calls:read"]);
    expect(withCalls.split("\r\n")[0]).toMatch(/,extracted_data\.patient_name$/);
    expect(withCalls).toContain("Zebulon Quaxworth");
    // A key kept for running campaigns reads their progress, not what was said on the calls.
    const campaignsOnly = await results(["campaigns:write"]);
    expect(campaignsOnly.split("\r\n")[0]).toBe("contact_id,phone,status,reason,attempts,last_call_id,last_call_status,duration_seconds,outcome");
    expect(campaignsOnly).not.toContain("Zebulon");
    expect(campaignsOnly).toContain(call.id);
  });

  it("keeps each account's do-not-call list its own, validates numbers, and needs the calls permissions", async () => {
    const mine = await app.account();
    const theirs = await app.account();
    expect((await app.request("POST", "/v1/do-not-call", { key: mine.key, body: { phone_number: "+14155550199" } })).status).toBe(201);
    expect((await app.request("GET", `/v1/do-not-call/${encodeURIComponent("+14155550199")}`, { key: theirs.key })).status).toBe(404);
    expect((await app.request("GET", "/v1/do-not-call", { key: theirs.key })).body).toMatchObject({ data: [], total: 0 });
    expect((await app.request("DELETE", `/v1/do-not-call/${encodeURIComponent("+14155550199")}`, { key: theirs.key })).status).toBe(404);
    expect((await app.request("GET", "/v1/do-not-call", { key: mine.key })).body).toMatchObject({ total: 1, data: [{ phone_number: "+14155550199", source: "api" }] });

    // Listing it again is 200 with the existing entry, and the OpenAPI document says so.
    const again = await app.request("POST", "/v1/do-not-call", { key: mine.key, body: { phone_number: "+14155550199" } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ phone_number: "+14155550199", source: "api" });
    const responses = (await app.request("GET", "/v1/openapi.json")).body.paths["/v1/do-not-call"].post.responses;
    expect(Object.keys(responses).filter((status) => status < "300")).toEqual(["200", "201"]);
    expect(responses["200"].content["application/json"].schema).toEqual(responses["201"].content["application/json"].schema);

    const bad = await app.request("POST", "/v1/do-not-call", { key: mine.key, body: { phone_number: "4155550199" } });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).details.fields.map((f: { field: string }) => f.field)).toEqual(["phone_number"]);
    expect((await app.request("GET", "/v1/do-not-call/not-a-number", { key: mine.key })).status).toBe(400);

    const readOnly = await app.key(mine.id, ["calls:read"]);
    expect((await app.request("GET", "/v1/do-not-call", { key: readOnly })).status).toBe(200);
    const refused = await app.request("POST", "/v1/do-not-call", { key: readOnly, body: { phone_number: "+14155550198" } });
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe("forbidden");
  });
});
