import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ACTIVE_CALL_STATUSES } from "../../src/db/repositories/calls.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * Two nodes on one database (two apps sharing it: one PostgreSQL database in the postgres lane,
 * one SQLite file in the other) racing for the same limit or the same work. On PostgreSQL
 * (READ COMMITTED, a pool per node) "count, check, write" in a transaction is not enough: each
 * of these fails there without the account lock or the conditional claim it checks.
 */

const opened: TestApp[] = [];
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  // The second node first: closing the first deletes the database.
  for (const app of opened.splice(0).reverse()) await app.close();
});

/** Two nodes sharing one database. */
async function twoNodes(env: NodeJS.ProcessEnv = {}): Promise<[TestApp, TestApp]> {
  const logger = pino({ level: process.env.DEBUG_CROSS_NODE ? "error" : "silent" }, pino.destination(2));
  const a = await startTestApp({}, env, logger);
  opened.push(a);
  const b = await startTestApp({}, env, logger, { shareDatabaseWith: a });
  opened.push(b);
  return [a, b];
}

/**
 * Whether `err` is SQLite refusing a write because the other app's connection holds the write
 * lock. Two apps in one process on one SQLite file (this test's stand-in for two nodes) cannot
 * wait for each other: better-sqlite3 is synchronous, so a connection waiting out busy_timeout
 * would block the thread, and the transaction it waits for with it. SQLite refuses at once
 * instead, and the write does not happen: safe, just not done. On PostgreSQL nothing is refused.
 */
function refusedBySqliteLock(app: TestApp, err: unknown): boolean {
  return !app.onPostgres && (err as { code?: string })?.code?.startsWith("SQLITE_BUSY") === true;
}

async function agent(app: TestApp, acct: TestAccount, name = "Ava"): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { name, system_prompt: "You call customers.", voice_id: "flite-slt" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe("plan limits checked by count-then-insert", () => {
  it("let exactly one of 10 concurrent creates over two nodes take an account's last free agent slot", async () => {
    const [a, b] = await twoNodes();
    const acct = await a.account();
    await a.parley.services.accounts.setLimits(acct.id, { agents: 4 });
    for (let i = 0; i < 3; i++) await agent(a, acct, `Existing ${i}`);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).request("POST", "/v1/agents", { key: acct.key, body: { name: `Racer ${i}`, system_prompt: "You call customers.", voice_id: "flite-slt" } }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 402), JSON.stringify(statuses)).toBe(true);
    const rows = await a.parley.services.db.selectFrom("agents").select("id").where("account_id", "=", acct.id).where("deleted_at", "is", null).execute();
    expect(rows).toHaveLength(4);
  });
});

describe("the queue claim", () => {
  it("never gives one queued call to both nodes nor takes more slots than the concurrent-call limit", async () => {
    const [a, b] = await twoNodes();
    const acct = await a.account({ credits: 1000 });
    await a.parley.services.accounts.setLimits(acct.id, { concurrentCalls: 2 });
    await a.activeNumber(acct.key, { phone_number: "+14155550100", country: "US" });
    const agentId = await agent(a, acct);
    const queued: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await a.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: `+1415555020${i}`, agent_id: agentId } });
      expect(res.body.status, JSON.stringify(res.body)).toBe("queued");
      queued.push(res.body.id);
    }
    // Each node claims again and again, several at once: 40 claims racing for 2 slots.
    const lifecycles = [a, b].map((app) => app.parley.services.callLifecycle);
    const raced = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => lifecycles[i % 2]!.claimNext(acct.id)));
    expect(raced.filter((r) => r.status === "rejected" && !refusedBySqliteLock(a, r.reason))).toEqual([]);
    const claimed = raced.flatMap((r) => (r.status === "fulfilled" && r.value ? [r.value.id] : []));
    // Then each node once more, one after the other: no slot is left to either.
    for (const lifecycle of lifecycles) {
      const more = await lifecycle.claimNext(acct.id);
      if (more) claimed.push(more.id);
    }
    expect(claimed).toHaveLength(2);
    expect(new Set(claimed).size).toBe(2);
    expect(queued).toEqual(expect.arrayContaining(claimed));
    const ringing = await a.parley.services.db.selectFrom("calls").select("id").where("account_id", "=", acct.id).where("status", "=", "ringing").execute();
    expect(ringing.map((r) => r.id).sort()).toEqual([...claimed].sort());
  });
});

describe("campaign contacts", () => {
  it("are each dialled once, and the campaign never has more than max_concurrent calls, with both nodes' runners dialling", async () => {
    const [a, b] = await twoNodes();
    const CONTACTS = 60;
    const MAX_CONCURRENT = 1;
    const acct = await a.account({ credits: 10_000 });
    await a.activeNumber(acct.key, { phone_number: "+14155550100", country: "US" });
    const agentId = await agent(a, acct);
    const contacts = Array.from({ length: CONTACTS }, (_, i) => ({ phone: `+14155550${300 + i}`, timezone: "America/Los_Angeles" }));
    const created = await a.request("POST", "/v1/campaigns", {
      key: acct.key,
      body: { name: "Both nodes", agent_id: agentId, contacts, settings: { max_concurrent: MAX_CONCURRENT, calling_hours: { start: "00:00", end: "24:00" } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const campaignId = created.body.id as string;
    const db = a.parley.services.db;
    const runners = [a.parley.services.campaignRunner, b.parley.services.campaignRunner];
    // The runners run only with the media engine: started here, with no dispatcher, queued calls stay queued.
    for (const runner of runners) runner.start();
    try {
      const callsOfCampaign = () => db.selectFrom("calls").select(["id", "contact_id", "status"]).where("campaign_id", "=", campaignId).execute();
      // Rounds: both runners pass together, several times; then the calls queued end (as placed
      // calls would), freeing the campaign's slots for the next contacts.
      for (let round = 0; round < CONTACTS / MAX_CONCURRENT; round++) {
        for (let pass = 0; pass < 2; pass++) {
          // The second node's pass starts a few queries after the first's (as many as the round's
          // number, up to 5): each round tries another way for the two to overlap.
          runners[0]!.wake();
          for (let q = 0; q < round % 6; q++) await b.parley.services.db.selectFrom("accounts").select("id").where("id", "=", acct.id).execute();
          runners[1]!.wake();
          // wake() starts a pass on a 0 ms timer: this one fires after it, then the passes are waited for.
          await new Promise((resolve) => setTimeout(resolve, 0));
          await Promise.all(runners.map((r) => r.idle()));
          const active = (await callsOfCampaign()).filter((c) => (ACTIVE_CALL_STATUSES as readonly string[]).includes(c.status));
          expect(active.length).toBeLessThanOrEqual(MAX_CONCURRENT);
        }
        const active = (await callsOfCampaign()).filter((c) => c.status === "queued");
        expect(active).toHaveLength(MAX_CONCURRENT);
        await db.updateTable("calls").set({ status: "completed", ended_at: new Date().toISOString() }).where("id", "in", active.map((c) => c.id)).execute();
      }
      const calls = await callsOfCampaign();
      expect(calls).toHaveLength(CONTACTS);
      expect(new Set(calls.map((c) => c.contact_id)).size).toBe(CONTACTS);
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
    }
    // 120 passes of two runners, each a few database round trips: 2 s alone, over 5 s beside the
    // real-time lane in CI. The limit guards against a hang, not against slowness.
  }, 30_000);
});

describe("webhook deliveries", () => {
  it("are each sent once when both nodes' delivery workers run", async () => {
    const [a, b] = await twoNodes({ PARLEY_WEBHOOK_VERIFY_URL: "0" });
    const acct = await a.account();
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const hook = await a.request("POST", "/v1/webhooks", { key: acct.key, body: { url: receiver.url, events: ["*"], secret: "whsec_test_secret_0123456789abcdef" } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    // Events appended on both nodes in turn, each waking its own worker: both look at the same due deliveries.
    for (let i = 0; i < 50; i++) {
      const { db, outbox } = (i % 2 === 0 ? a : b).parley.services;
      await db.transaction().execute((trx) => outbox.append([{ accountId: acct.id, name: "agent.updated", data: { n: i } }], trx));
    }
    await receiver.waitFor(50, 20_000);
    const db = a.parley.services.db;
    const settled = async () => {
      for (;;) {
        const open = await db.selectFrom("deliveries").select("id").where("webhook_id", "=", hook.body.id).where("status", "!=", "delivered").execute();
        if (open.length === 0 && a.parley.services.webhookDelivery.inFlight === 0 && b.parley.services.webhookDelivery.inFlight === 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await settled();
    const deliveries = await db.selectFrom("deliveries").select(["id", "attempt_count"]).where("webhook_id", "=", hook.body.id).execute();
    expect(deliveries).toHaveLength(50);
    expect(deliveries.every((d) => Number(d.attempt_count) === 1)).toBe(true);
    expect(receiver.received).toHaveLength(50);
    expect(new Set(receiver.received.map((r) => r.delivery))).toEqual(new Set(deliveries.map((d) => d.id)));
    expect(new Set(receiver.received.map((r) => r.body.data.n)).size).toBe(50);
  });
});

describe("credit holds", () => {
  it("let the calls of one account on both nodes together hold no more minutes than its credit", async () => {
    const [a, b] = await twoNodes();
    const acct = await a.account({ credits: 2 });
    await a.parley.services.accounts.setLimits(acct.id, { concurrentCalls: 50 });
    const agentId = await agent(a, acct);
    const start = async (app: TestApp) => {
      const { accounts, agents, liveCalls } = app.parley.services;
      const setup = { account: (await accounts.find(acct.id))!, agent: await agents.get(acct.id, agentId), direction: "web", phoneNumber: null, fromNumber: null, record: false, maxDuration: 600, metadata: {}, context: {} } as const;
      return (await liveCalls.begin(setup)).id;
    };
    // 10 calls starting at once, half on each node, for 2 minutes of credit.
    const raced = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => start(i % 2 === 0 ? a : b)));
    const refused = raced.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    expect(refused.filter((err) => err?.code !== "insufficient_credits" && !refusedBySqliteLock(a, err))).toEqual([]);
    const started = raced.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    // Then each node once more, one after the other: no minute is left to either.
    for (const app of [a, b]) {
      const more = await start(app).catch((err: unknown) => {
        expect(err).toMatchObject({ status: 402, code: "insufficient_credits" });
        return undefined;
      });
      if (more) started.push(more);
    }
    expect(started).toHaveLength(2);
    const db = a.parley.services.db;
    const live = await db.selectFrom("calls").select("id").where("account_id", "=", acct.id).where("status", "=", "in_progress").execute();
    expect(live.map((r) => r.id).sort()).toEqual([...started].sort());
    expect(await b.parley.services.reservations.heldBy(acct.id)).toBe(2);

    // A next minute is not free on either node either; once one call is charged (one minute),
    // the minute it held is the balance's again, and spent: a credit added is what starts a call.
    expect(await b.parley.services.reservations.tryReserveMinute(acct.id, started[0]!)).toBe(false);
    expect(await a.parley.services.liveCalls.end(started[0]!, { status: "completed", durationMs: 20_000, transcript: [], recordingPath: null })).toBe(true);
    await expect(start(b)).rejects.toMatchObject({ status: 402, code: "insufficient_credits" });
    await a.parley.services.accounts.addCredits(acct.id, 1);
    expect(await start(b)).toMatch(/^call_/);
    expect(await a.parley.services.reservations.heldBy(acct.id)).toBe(2);
  });
});
