import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIVE_CALL_STATUSES } from "../../src/db/repositories/calls.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { untilValue } from "../helpers/until.js";

// Campaigns dialled for real: the runner, the dispatcher and the simulator carrier, with the
// simulator's dialler numbers (+1500555 then 1 answers and hangs up at once, 2 rings and is
// not answered, 3 is busy, 4 fails; the last three digits are free), which speak nothing.

const HANGS_UP = (i: number) => `+15005551${String(i).padStart(3, "0")}`;
const NO_ANSWER = (i: number) => `+15005552${String(i).padStart(3, "0")}`;
const BUSY = (i: number) => `+15005553${String(i).padStart(3, "0")}`;
const FAILS = (i: number) => `+15005554${String(i).padStart(3, "0")}`;
/** Answers and, after the agent's greeting, says "please stop calling me and take me off your list". */
const ASKS_OFF = (i: number) => `+15005555${String(i).padStart(3, "0")}`;
/** A "minute" of retry_delay_minutes in this file. */
const MINUTE_MS = 300;
const ALL_DAY = { start: "00:00", end: "24:00" };
const ENV = {
  PARLEY_ENGINE: "1",
  PARLEY_CALL_CAPACITY: "8",
  PARLEY_ENGINE_ACCOUNT_SHARE_PERCENT: "100",
  PARLEY_CAMPAIGN_MINUTE_MS: String(MINUTE_MS),
  PARLEY_CAMPAIGN_POLL_MS: "50",
};


/** Records, at every call status change, the live calls of each campaign and account (counted in the change's transaction). */
function sampleConcurrency(app: TestApp) {
  const maxLive = new Map<string, number>();
  app.parley.services.callEvents.follow(async (call, _from, trx) => {
    const live = async (column: "campaign_id" | "account_id", id: string) =>
      Number(
        (
          await trx
            .selectFrom("calls")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .where(column, "=", id)
            .where("status", "in", LIVE_CALL_STATUSES)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const note = (key: string, n: number) => maxLive.set(key, Math.max(maxLive.get(key) ?? 0, n));
    note(call.account_id, await live("account_id", call.account_id));
    if (call.campaign_id) note(call.campaign_id, await live("campaign_id", call.campaign_id));
  });
  return maxLive;
}

describe("the campaign runner with the simulator carrier", () => {
  let app: TestApp;
  let maxLive: Map<string, number>;
  let accounts = 0;
  beforeAll(async () => {
    app = await startTestApp({}, ENV);
    maxLive = sampleConcurrency(app);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  async function setUp(options: { credits?: number; concurrentCalls?: number } = {}) {
    const acct = await app.account({ credits: options.credits ?? 1000 });
    if (options.concurrentCalls) await app.parley.services.accounts.setLimits(acct.id, { concurrentCalls: options.concurrentCalls });
    await app.parley.services.phoneNumbers.add(acct.id, { phone_number: `+1650555${String(1000 + accounts++)}`, country: "US" } as never);
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Ava", system_prompt: "You call customers.", voice_id: "flite-kal", first_message: "Hello, this is Ava from Acme Dental." },
    });
    expect(agent.status).toBe(201);
    return { acct, agentId: agent.body.id as string };
  }
  const createCampaign = async (acct: TestAccount, body: Record<string, unknown>) => {
    // Round the clock unless a test sets hours: the default window (08:00-21:00 in every US
    // zone at once) is shut for most of the UTC day, and a test must not depend on the hour it runs.
    const settings = (body.settings ?? {}) as Record<string, unknown>;
    body = { ...body, settings: { calling_hours: ALL_DAY, ...settings } };
    const res = await app.request("POST", "/v1/campaigns", { key: acct.key, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  // Polled through the service, not HTTP: a poll every 25 ms would soon meet the account's request rate limit.
  const progress = (acct: TestAccount, id: string) => app.parley.services.campaigns.get(acct.id, id);
  const read = async (acct: TestAccount, id: string) => {
    const res = await app.request("GET", `/v1/campaigns/${id}`, { key: acct.key });
    expect(res.status).toBe(200);
    return res.body;
  };
  const finished = async (acct: TestAccount, id: string, status = "completed", timeoutMs = 60_000) => {
    await untilValue(`campaign ${id} ${status}`, async () => (await progress(acct, id)).status === status, timeoutMs);
    return read(acct, id);
  };
  const allContacts = async (acct: TestAccount, id: string) => {
    const res = await app.request("GET", `/v1/campaigns/${id}/contacts?limit=100`, { key: acct.key });
    expect(res.status).toBe(200);
    return res.body.data as Array<{ phone: string; status: string; reason: string | null; attempts: number; calls: Array<{ call_id: string; status: string; created_at: string; ended_at: string | null }> }>;
  };
  const eventsOf = async (acct: TestAccount, name: string) =>
    ((await app.request("GET", `/v1/events?limit=100&name=${name}`, { key: acct.key })).body.data as Array<{ data: Record<string, any> }>).map((e) => e.data);

  it("calls every contact once, never more than max_concurrent at a time, and completes with the counts", async () => {
    const { acct, agentId } = await setUp();
    const contacts = [
      ...Array.from({ length: 6 }, (_, i) => ({ phone: HANGS_UP(i), context: { first_name: `Ann ${i}` } })),
      ...Array.from({ length: 3 }, (_, i) => ({ phone: BUSY(i) })),
      ...Array.from({ length: 3 }, (_, i) => ({ phone: NO_ANSWER(i) })),
    ];
    const campaign = await createCampaign(acct, { name: "Twelve", agent_id: agentId, contacts, settings: { max_concurrent: 3 } });
    const done = await finished(acct, campaign.id);
    expect(done.contacts).toMatchObject({ total: 12, completed: 6, busy: 3, no_answer: 3, pending: 0, calling: 0 });
    expect(done.attempts).toBe(12);
    expect(done.started_at).not.toBeNull();
    expect(done.finished_at).not.toBeNull();
    // Concurrency was used, and never went past the bound.
    expect(maxLive.get(campaign.id)).toBe(3);

    const listed = await allContacts(acct, campaign.id);
    expect(listed.map((c) => c.phone)).toEqual(contacts.map((c) => c.phone));
    expect(listed.every((c) => c.attempts === 1 && c.calls.length === 1)).toBe(true);
    const call = (await app.request("GET", `/v1/calls/${listed[0]!.calls[0]!.call_id}`, { key: acct.key })).body;
    expect(call).toMatchObject({ status: "completed", phone_number: HANGS_UP(0), from_number: "+16505551000", metadata: { campaign_id: campaign.id, contact_id: expect.stringMatching(/^cc_/) } });
    // The contact's context goes to the agent as the call's context.
    expect((await app.parley.services.calls.get(acct.id, call.id)).context).toEqual({ first_name: "Ann 0" });

    expect((await eventsOf(acct, "campaign.started")).map((d) => d.campaign_id)).toEqual([campaign.id]);
    const [completed] = await eventsOf(acct, "campaign.completed");
    expect(completed).toMatchObject({ campaign_id: campaign.id, status: "completed", contacts: { total: 12, completed: 6, busy: 3, no_answer: 3 } });

    const csv = await app.request("GET", `/v1/campaigns/${campaign.id}/results.csv`, { key: acct.key });
    expect(csv.status).toBe(200);
    const lines = (csv.body as string).trimEnd().split("\r\n");
    expect(lines[0]).toBe("contact_id,phone,status,reason,attempts,last_call_id,last_call_status,duration_seconds,outcome");
    expect(lines).toHaveLength(13);
    expect(lines[1]!.split(",").slice(1, 7)).toEqual([HANGS_UP(0), "completed", "", "1", listed[0]!.calls[0]!.call_id, "completed"]);
    expect(lines[7]!.split(",").slice(1, 5)).toEqual([BUSY(0), "busy", "", "1"]);
  }, 90_000);

  it("keeps two campaigns and a single call within the account's concurrent-call limit, the single call first", async () => {
    const { acct, agentId } = await setUp({ concurrentCalls: 4 });
    const first = await createCampaign(acct, { name: "A", agent_id: agentId, contacts: Array.from({ length: 10 }, (_, i) => ({ phone: NO_ANSWER(100 + i) })), settings: { max_concurrent: 3 } });
    const second = await createCampaign(acct, { name: "B", agent_id: agentId, contacts: Array.from({ length: 10 }, (_, i) => ({ phone: NO_ANSWER(200 + i) })), settings: { max_concurrent: 3 } });
    await untilValue("both campaigns calling", async () => (await progress(acct, first.id)).attempts > 0 && (await progress(acct, second.id)).attempts > 0);
    const single = await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: HANGS_UP(999), agent_id: agentId } });
    expect(single.status).toBe(200);
    await untilValue("the single call", async () => (await app.parley.services.calls.get(acct.id, single.body.id)).status === "completed");
    const singleDone = (await app.request("GET", `/v1/calls/${single.body.id}`, { key: acct.key })).body;
    await Promise.all([finished(acct, first.id), finished(acct, second.id)]);
    expect(maxLive.get(acct.id)).toBe(4);
    expect(maxLive.get(first.id)).toBeLessThanOrEqual(3);
    expect(maxLive.get(second.id)).toBeLessThanOrEqual(3);
    // Placed before the campaigns were through: it did not wait behind their contacts.
    const lastCampaignCall = (await allContacts(acct, second.id)).flatMap((c) => c.calls).map((c) => c.created_at).sort().at(-1)!;
    expect(singleDone.created_at < lastCampaignCall).toBe(true);
  }, 90_000);

  it("starts a scheduled campaign at its time, not before", async () => {
    const { acct, agentId } = await setUp();
    const at = new Date(Date.now() + 1500).toISOString();
    const campaign = await createCampaign(acct, { name: "Later", agent_id: agentId, contacts: [{ phone: HANGS_UP(300) }], settings: { schedule: at } });
    expect((await read(acct, campaign.id)).status).toBe("scheduled");
    const done = await finished(acct, campaign.id);
    expect(done.started_at >= at).toBe(true);
    const [contact] = await allContacts(acct, campaign.id);
    expect(contact!.calls[0]!.created_at >= at).toBe(true);
  }, 30_000);

  it("retries busy and unanswered contacts after the delay up to max_attempts, and a failed one once", async () => {
    const { acct, agentId } = await setUp();
    const campaign = await createCampaign(acct, {
      name: "Retries",
      agent_id: agentId,
      contacts: [{ phone: BUSY(400) }, { phone: NO_ANSWER(400) }, { phone: FAILS(400) }, { phone: HANGS_UP(400) }],
      settings: { retry_no_answer: true, max_attempts: 3, retry_delay_minutes: 1 },
    });
    const done = await finished(acct, campaign.id);
    expect(done.contacts).toMatchObject({ busy: 1, no_answer: 1, failed: 1, completed: 1 });
    const byPhone = Object.fromEntries((await allContacts(acct, campaign.id)).map((c) => [c.phone, c]));
    expect(byPhone[BUSY(400)]!.calls.map((c) => c.status)).toEqual(["busy", "busy", "busy"]);
    expect(byPhone[NO_ANSWER(400)]!.calls.map((c) => c.status)).toEqual(["no_answer", "no_answer", "no_answer"]);
    expect(byPhone[FAILS(400)]!.calls.map((c) => c.status)).toEqual(["failed", "failed"]);
    expect(byPhone[HANGS_UP(400)]!.calls.map((c) => c.status)).toEqual(["completed"]);
    // Each retry waited the delay after the attempt before it ended.
    for (const phone of [BUSY(400), NO_ANSWER(400), FAILS(400)]) {
      const calls = byPhone[phone]!.calls;
      for (let i = 1; i < calls.length; i++) expect(Date.parse(calls[i]!.created_at) - Date.parse(calls[i - 1]!.ended_at!)).toBeGreaterThanOrEqual(MINUTE_MS - 5);
    }
  }, 60_000);

  it("never dials a number on the do-not-call list: the contact is skipped, and POST /v1/calls refuses it", async () => {
    const { acct, agentId } = await setUp();
    const added = await app.request("POST", "/v1/do-not-call", { key: acct.key, body: { phone_number: HANGS_UP(500) } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ phone_number: HANGS_UP(500), source: "api", call_id: null });
    const again = await app.request("POST", "/v1/do-not-call", { key: acct.key, body: { phone_number: HANGS_UP(500) } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(added.body.id);

    const refused = await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: HANGS_UP(500), agent_id: agentId } });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toMatchObject({ code: "phone_number_on_do_not_call_list", details: { fields: [{ field: "phone_number" }] } });

    const campaign = await createCampaign(acct, { name: "DNC", agent_id: agentId, contacts: [{ phone: HANGS_UP(500) }, { phone: HANGS_UP(501) }] });
    const done = await finished(acct, campaign.id);
    expect(done.contacts).toMatchObject({ skipped: 1, completed: 1 });
    const [listed, called] = await allContacts(acct, campaign.id);
    expect(listed).toMatchObject({ status: "skipped", reason: "do_not_call", attempts: 0, calls: [] });
    expect(called).toMatchObject({ status: "completed", attempts: 1 });

    expect((await app.request("DELETE", `/v1/do-not-call/${encodeURIComponent(HANGS_UP(500))}`, { key: acct.key })).body).toEqual({ phone_number: HANGS_UP(500), deleted: true });
    expect((await app.request("GET", `/v1/do-not-call/${encodeURIComponent(HANGS_UP(500))}`, { key: acct.key })).status).toBe(404);
    expect((await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: HANGS_UP(500), agent_id: agentId } })).status).toBe(200);
  }, 30_000);

  it("lists a callee who asks not to be called again: the agent confirms and hangs up, the contact is do_not_call", async () => {
    const { acct, agentId } = await setUp();
    const campaign = await createCampaign(acct, { name: "Opt out", agent_id: agentId, contacts: [{ phone: ASKS_OFF(1) }, { phone: HANGS_UP(550) }] });
    const done = await finished(acct, campaign.id, "completed", 90_000);
    expect(done.contacts).toMatchObject({ do_not_call: 1, completed: 1 });
    const [asked] = await allContacts(acct, campaign.id);
    expect(asked).toMatchObject({ status: "do_not_call", attempts: 1 });
    const callId = asked!.calls[0]!.call_id;
    expect(asked!.calls[0]).toMatchObject({ status: "completed", outcome: "do_not_call" });
    const entry = await app.request("GET", `/v1/do-not-call/${encodeURIComponent(ASKS_OFF(1))}`, { key: acct.key });
    expect(entry.body).toMatchObject({ phone_number: ASKS_OFF(1), source: "callee_request", call_id: callId });
    const call = (await app.request("GET", `/v1/calls/${callId}?include=transcript`, { key: acct.key })).body;
    const agentSaid = call.transcript.filter((t: { role: string }) => t.role === "agent").map((t: { content: string }) => t.content).join(" ");
    expect(agentSaid).toContain("taken your number off our calling list");
    const [event] = (await eventsOf(acct, "call.completed")).filter((d) => d.call_id === callId);
    expect(event).toMatchObject({ outcome: "do_not_call" });
    expect((await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: ASKS_OFF(1), agent_id: agentId } })).status).toBe(400);
  }, 120_000);

  it("pauses when the credit cannot pay for a next call, fails nothing, and goes on only when resumed", async () => {
    const { acct, agentId } = await setUp({ credits: 2 });
    const contacts = Array.from({ length: 6 }, (_, i) => ({ phone: NO_ANSWER(600 + i) }));
    const campaign = await createCampaign(acct, { name: "Credits", agent_id: agentId, contacts, settings: { max_concurrent: 3 } });
    const paused = await finished(acct, campaign.id, "paused");
    expect(paused.paused_reason).toBe("insufficient_credits");
    // The calls under way finish; nothing failed, the rest wait.
    await untilValue("calls under way settled", async () => (await progress(acct, campaign.id)).counts.calling === 0);
    const settled = await read(acct, campaign.id);
    expect(settled.contacts).toMatchObject({ failed: 0, no_answer: 2, pending: 4 });
    const [event] = await eventsOf(acct, "campaign.paused");
    expect(event).toMatchObject({ campaign_id: campaign.id, paused_reason: "insufficient_credits" });
    // Credit coming back does not resume it by itself.
    await app.parley.services.accounts.addCredits(acct.id, 100, "top-up");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await read(acct, campaign.id)).status).toBe("paused");
    expect((await app.request("POST", `/v1/campaigns/${campaign.id}/resume`, { key: acct.key })).status).toBe(200);
    const done = await finished(acct, campaign.id);
    expect(done.contacts).toMatchObject({ no_answer: 6, failed: 0 });
    expect(done.paused_reason).toBeNull();
  }, 60_000);

  it("pause lets calls under way finish and starts no more; resume goes on; cancel ends the pending contacts", async () => {
    const { acct, agentId } = await setUp();
    const contacts = Array.from({ length: 12 }, (_, i) => ({ phone: NO_ANSWER(700 + i) }));
    const campaign = await createCampaign(acct, { name: "Controls", agent_id: agentId, contacts, settings: { max_concurrent: 2 } });
    await untilValue("first calls", async () => (await progress(acct, campaign.id)).attempts >= 2);
    const paused = await app.request("POST", `/v1/campaigns/${campaign.id}/pause`, { key: acct.key });
    expect(paused.body).toMatchObject({ status: "paused", paused_reason: "requested" });
    await untilValue("calls under way settled", async () => (await progress(acct, campaign.id)).counts.calling === 0);
    const settled = await read(acct, campaign.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await read(acct, campaign.id)).attempts).toBe(settled.attempts);

    expect((await app.request("POST", `/v1/campaigns/${campaign.id}/resume`, { key: acct.key })).status).toBe(200);
    await untilValue("calls again", async () => (await progress(acct, campaign.id)).attempts > settled.attempts);
    // Running, with contacts done in the last minutes: an estimate of when it will finish.
    const running = await read(acct, campaign.id);
    expect(running.status).toBe("running");
    expect(Date.parse(running.estimated_finish_at)).toBeGreaterThan(Date.parse(running.started_at));
    const cancelled = await app.request("POST", `/v1/campaigns/${campaign.id}/cancel`, { key: acct.key });
    expect(cancelled.body.status).toBe("cancelled");
    await untilValue("cancelled contacts settled", async () => (await progress(acct, campaign.id)).counts.calling === 0);
    const after = await read(acct, campaign.id);
    expect(after.contacts.pending).toBe(0);
    expect(after.contacts.cancelled).toBeGreaterThan(0);
    expect(after.contacts.cancelled + after.contacts.no_answer).toBe(12);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await read(acct, campaign.id)).attempts).toBe(after.attempts);
    expect((await eventsOf(acct, "campaign.cancelled")).map((d) => d.campaign_id)).toEqual([campaign.id]);
  }, 60_000);

  it("pauses a campaign whose agent is made inactive", async () => {
    const { acct, agentId } = await setUp();
    const contacts = Array.from({ length: 8 }, (_, i) => ({ phone: NO_ANSWER(800 + i) }));
    const campaign = await createCampaign(acct, { name: "Agent off", agent_id: agentId, contacts, settings: { max_concurrent: 1 } });
    await untilValue("first call", async () => (await progress(acct, campaign.id)).attempts >= 1);
    expect((await app.request("PATCH", `/v1/agents/${agentId}`, { key: acct.key, body: { status: "inactive" } })).status).toBe(200);
    const paused = await finished(acct, campaign.id, "paused");
    expect(paused.paused_reason).toBe("agent_inactive");
  }, 30_000);

  it("pauses a campaign whose agent was deleted", async () => {
    const { acct, agentId } = await setUp();
    const contacts = Array.from({ length: 4 }, (_, i) => ({ phone: NO_ANSWER(850 + i) }));
    const campaign = await createCampaign(acct, { name: "Agent gone", agent_id: agentId, contacts, settings: { max_concurrent: 1 } });
    await untilValue("first call", async () => (await progress(acct, campaign.id)).attempts >= 1);
    expect((await app.request("POST", `/v1/campaigns/${campaign.id}/pause`, { key: acct.key })).status).toBe(200);
    await untilValue("calls under way settled", async () => (await progress(acct, campaign.id)).counts.calling === 0);
    expect((await app.request("DELETE", `/v1/agents/${agentId}`, { key: acct.key })).status).toBe(200);
    expect((await app.request("POST", `/v1/campaigns/${campaign.id}/resume`, { key: acct.key })).status).toBe(200);
    const paused = await finished(acct, campaign.id, "paused");
    expect(paused.paused_reason).toBe("agent_deleted");
    expect(paused.contacts.pending).toBeGreaterThan(0);
  }, 30_000);

  it("rejects bad settings, naming the field", async () => {
    const { acct, agentId } = await setUp();
    const bad = async (settings: Record<string, unknown>, contacts: unknown[] = [{ phone: HANGS_UP(900) }]) => {
      const res = await app.request("POST", "/v1/campaigns", { key: acct.key, body: { name: "Bad", agent_id: agentId, contacts, settings } });
      expect(res.status).toBe(400);
      return errorOf(res).details.fields.map((f: { field: string }) => f.field);
    };
    expect(await bad({ calling_hours: { start: "21:00", end: "09:00" } })).toEqual(["settings.calling_hours.end"]);
    expect(await bad({ calling_hours: { start: "9am", end: "17:00" } })).toEqual(["settings.calling_hours.start"]);
    expect(await bad({ calling_hours: { start: "09:00", end: "17:00", days: ["monday"] } })).toEqual(["settings.calling_hours.days[0]"]);
    expect(await bad({ timezone: "Mars/Olympus" })).toEqual(["settings.timezone"]);
    expect(await bad({}, [{ phone: HANGS_UP(900), timezone: "Nowhere" }])).toEqual(["contacts[0].timezone"]);
    expect(await bad({ max_attempts: 0 })).toEqual(["settings.max_attempts"]);
    expect(await bad({ retry_delay_minutes: -1 })).toEqual(["settings.retry_delay_minutes"]);
    expect(await bad({ from_number: "+19995550100" })).toEqual(["settings.from_number"]);
    // US numbers without a zone are called while the hours hold in every US zone: 09:00-10:00 never does.
    expect(await bad({ calling_hours: { start: "09:00", end: "10:00" } })).toEqual(["contacts[0].timezone"]);
  });
});

describe("calling hours on a fake clock", () => {
  let app: TestApp;
  // Monday 22:30 UTC: 23:30 in Paris, 17:30 in New York.
  let now = Date.parse("2026-11-23T22:30:00Z");
  beforeAll(async () => {
    app = await startTestApp({}, ENV, undefined, { clock: () => now });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it("calls each contact only inside its local hours, across a day boundary and two zones", async () => {
    const acct = await app.account({ credits: 100 });
    await app.parley.services.phoneNumbers.add(acct.id, { phone_number: "+16505551234", country: "US" } as never);
    const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Ava", system_prompt: "You call customers.", voice_id: "flite-kal" } });
    const res = await app.request("POST", "/v1/campaigns", {
      key: acct.key,
      body: {
        name: "Hours",
        agent_id: agent.body.id,
        contacts: [
          { phone: HANGS_UP(10), timezone: "Europe/Paris" },
          { phone: HANGS_UP(11), timezone: "America/New_York" },
          { phone: HANGS_UP(12), timezone: "Europe/Paris" },
        ],
        settings: { calling_hours: { start: "09:00", end: "18:00", days: ["mon", "tue", "wed", "thu", "fri"] } },
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    const contacts = async () => (await app.parley.services.campaigns.contactsOf(await app.parley.services.campaigns.get(acct.id, id))).map((c) => c.status);
    // Only New York is open.
    await untilValue("the New York contact called", async () => (await contacts())[1] === "completed");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await contacts()).toEqual(["pending", "completed", "pending"]);
    // Tuesday 08:30 in Paris: still closed.
    now = Date.parse("2026-11-24T07:30:00Z");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await contacts()).toEqual(["pending", "completed", "pending"]);
    // Tuesday 09:00 in Paris: open.
    now = Date.parse("2026-11-24T08:00:00Z");
    await untilValue("the Paris contacts called", async () => (await contacts()).every((s) => s === "completed"));
    expect((await app.request("GET", `/v1/campaigns/${id}`, { key: acct.key })).body.status).toBe("completed");
  }, 60_000);
});
