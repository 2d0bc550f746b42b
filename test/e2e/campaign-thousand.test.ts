import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIVE_CALL_STATUSES } from "../../src/db/repositories/calls.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// The dialler at scale: 1,000 simulator contacts at max_concurrent 50. The callees answer and
// hang up at once, ring briefly unanswered, or are busy (the simulator's dialler numbers), so
// the test is about the runner and the dispatcher, not conversations.

const CONTACTS = 1000;
const MAX_CONCURRENT = 50;
const phoneOf = (i: number) => `+1500555${1 + (i % 3)}${String(Math.floor(i / 3)).padStart(3, "0")}`;

describe("a campaign of 1,000 contacts", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_CALL_CAPACITY: "64", PARLEY_CAMPAIGN_POLL_MS: "200" });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it("calls each contact exactly once, at most 50 at a time, and completes", async () => {
    const acct = await app.account({ plan: "agency", credits: 100_000 });
    await app.parley.services.phoneNumbers.add(acct.id, { phone_number: "+16505550100", country: "US" } as never);
    const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Ava", system_prompt: "You call customers.", voice_id: "flite-kal" } });
    let maxLive = 0;
    app.parley.services.callEvents.follow(async (call, _from, trx) => {
      if (call.account_id !== acct.id) return;
      const row = await trx.selectFrom("calls").select((eb) => eb.fn.countAll<number>().as("n")).where("campaign_id", "=", call.campaign_id).where("status", "in", LIVE_CALL_STATUSES).executeTakeFirstOrThrow();
      maxLive = Math.max(maxLive, Number(row.n));
    });

    const contacts = Array.from({ length: CONTACTS }, (_, i) => ({ phone: phoneOf(i) }));
    const cpuBefore = process.cpuUsage();
    const started = Date.now();
    const res = await app.request("POST", "/v1/campaigns", { key: acct.key, body: { name: "Thousand", agent_id: agent.body.id, contacts, settings: { max_concurrent: MAX_CONCURRENT, calling_hours: { start: "00:00", end: "24:00" } } } });
    expect(res.status).toBe(201);
    let campaign = res.body;
    const end = Date.now() + 10 * 60_000;
    while (campaign.status !== "completed") {
      if (Date.now() > end) throw new Error(`not completed: ${JSON.stringify(campaign.contacts)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      campaign = (await app.request("GET", `/v1/campaigns/${campaign.id}`, { key: acct.key })).body;
    }
    const seconds = (Date.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);

    const third = Math.ceil(CONTACTS / 3);
    expect(campaign.contacts).toMatchObject({ total: CONTACTS, completed: third, no_answer: third - 1, busy: third - 1, pending: 0, calling: 0, failed: 0 });
    expect(campaign.attempts).toBe(CONTACTS);
    // One call per contact, no duplicates.
    const rows = await app.parley.services.db
      .selectFrom("calls")
      .select((eb) => ["contact_id", eb.fn.countAll<number>().as("n")])
      .where("campaign_id", "=", campaign.id)
      .groupBy("contact_id")
      .execute();
    expect(rows).toHaveLength(CONTACTS);
    expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
    expect(maxLive).toBe(MAX_CONCURRENT);
    // For docs/benchmark.md (not asserted: timings belong to measurements, not tests).
    console.log(
      `campaign of ${CONTACTS} at max_concurrent ${MAX_CONCURRENT}: ${seconds.toFixed(1)} s, ${(CONTACTS / seconds).toFixed(1)} calls/s, ` +
        `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (${((cpu.user + cpu.system) / 1e4 / seconds).toFixed(0)}% of one core)`,
    );
  }, 12 * 60_000);
});
