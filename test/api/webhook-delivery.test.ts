import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EventName } from "../../src/services/event-names.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, verifyParleySignature, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// The reference's schedule (1 s ... 10 min) scaled down to milliseconds; a 1 s attempt timeout.
const SCHEDULE = [30, 60, 90, 120, 150];
let app: TestApp;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(","), PARLEY_WEBHOOK_TIMEOUT_MS: "1000" });
});
afterAll(() => app.close());
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function webhook(account: TestAccount, url: string, events: string[] = ["*"], secret = "whsec_test_secret_0123456789abcdef"): Promise<{ id: string; secret: string }> {
  const res = await app.request("POST", "/v1/webhooks", { key: account.key, body: { url, events, secret } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, secret };
}

/** Stores an event as a change would (the outbox's append in a transaction). */
async function emit(account: TestAccount, name: EventName, data: Record<string, unknown> = {}) {
  const { db, outbox } = app.parley.services;
  const [event] = await db.transaction().execute((trx) => outbox.append([{ accountId: account.id, name, data }], trx));
  return event!;
}

async function deliveries(account: TestAccount, webhookId: string, query = "") {
  const res = await app.request("GET", `/v1/webhooks/${webhookId}/deliveries${query}`, { key: account.key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as any[];
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const webhookStatus = async (account: TestAccount, id: string) => (await app.request("GET", `/v1/webhooks/${id}`, { key: account.key })).body.status as string;

describe("a delivery", () => {
  it("is a signed POST of the envelope with Parley's headers, and the signature fails for a tampered body, a wrong secret or an old timestamp", async () => {
    const acct = await app.account();
    const r = await receiver();
    const hook = await webhook(acct, r.url);
    const event = await emit(acct, "call.completed", { call_id: "call_x", duration_seconds: 42 });
    const [got] = await r.waitFor(1);

    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["user-agent"]).toMatch(/^Parley\/\d+\.\d+\.\d+$/);
    expect(got!.event).toBe("call.completed");
    expect(got!.delivery).toMatch(/^dlv_[0-9A-Za-z]{20}$/);
    expect(got!.body).toEqual({ event: "call.completed", timestamp: event.created_at, webhook_id: hook.id, event_id: event.id, sequence: event.seq, data: { call_id: "call_x", duration_seconds: 42 } });

    const header = got!.headers["x-parley-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyParleySignature(header, got!.rawBody, hook.secret)).toBe(true);
    expect(verifyParleySignature(header, got!.rawBody.replace("42", "43"), hook.secret)).toBe(false);
    expect(verifyParleySignature(header, got!.rawBody, "whsec_another_secret_0123456789ab")).toBe(false);
    const t = Number(/t=(\d+)/.exec(header)![1]);
    expect(verifyParleySignature(header, got!.rawBody, hook.secret, t + 301)).toBe(false);

    const [listed] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "delivered", "delivered");
    expect(listed.id).toBe(got!.delivery);
    expect(listed).toMatchObject({ webhook_id: hook.id, event_id: event.id, event: "call.completed", attempt_count: 1, next_attempt_at: null });
    expect(listed.attempts).toEqual([{ number: 1, started_at: expect.any(String), duration_ms: expect.any(Number), status_code: 200, error: null, response_body: "ok" }]);
  });

  it("is sent when the event's transaction commits, however long after the append that commit comes", async () => {
    const acct = await app.account();
    const r = await receiver();
    await webhook(acct, r.url);
    const { db, outbox } = app.parley.services;
    let committedAt = 0;
    await db.transaction().execute(async (trx) => {
      await outbox.append([{ accountId: acct.id, name: "call.completed", data: {} }], trx);
      // The worker is woken by the append, looks, and (on PostgreSQL) finds nothing committed yet.
      await new Promise((resolve) => setTimeout(resolve, 300));
      committedAt = Date.now();
    });
    await r.waitFor(1);
    // Not at the worker's next idle look (5 s later): woken by the commit (its notice on PostgreSQL).
    expect(Date.now() - committedAt).toBeLessThan(2_500);
  });

  it("goes to each webhook whose subscription names the event, under the name it subscribed to; * gets everything", async () => {
    const acct = await app.account();
    const [completedOnly, all, initiated] = [await receiver(), await receiver(), await receiver()];
    await webhook(acct, completedOnly.url, ["call.completed"]);
    await webhook(acct, all.url, ["*"]);
    await webhook(acct, initiated.url, ["call.initiated", "agent.created"]);
    const other = await app.account();
    const othersReceiver = await receiver();
    await webhook(other, othersReceiver.url, ["*"]);

    await emit(acct, "call.started");
    await emit(acct, "call.completed");
    await emit(acct, "credits.low", { balance: 3 });
    await all.waitFor(3);
    await completedOnly.waitFor(1);
    await initiated.waitFor(1);
    // One more event to every webhook, so anything wrongly sent before it has arrived too.
    await emit(acct, "agent.created");
    await Promise.all([all.waitFor(4), initiated.waitFor(2)]);
    await until(async () => (await deliveries(acct, (await app.request("GET", "/v1/webhooks", { key: acct.key })).body.data[0].id)).length, (n) => n > 0, "deliveries listed");

    expect(all.received.map((r) => r.event).sort()).toEqual(["agent.created", "call.completed", "call.started", "credits.low"]);
    expect(completedOnly.received.map((r) => r.event)).toEqual(["call.completed"]);
    expect(initiated.received.map((r) => [r.event, r.body.event]).sort()).toEqual([["agent.created", "agent.created"], ["call.initiated", "call.initiated"]]);
    expect(othersReceiver.received).toEqual([]);
  });

  it("is retried after each wait of the schedule until it succeeds: the webhook is failing meanwhile, then active again", async () => {
    const acct = await app.account();
    const r = await receiver();
    let healthy = false;
    r.answer(() => (healthy ? { status: 200 } : { status: 500, body: "broken" }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.updated");

    await r.waitFor(3);
    expect(await until(() => webhookStatus(acct, hook.id), (s) => s === "failing", "failing")).toBe("failing");
    healthy = true;
    const got = await r.waitFor(4);
    const [delivery] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "delivered", "delivered");

    expect(new Set(got.map((g) => g.delivery))).toEqual(new Set([delivery.id]));
    expect(delivery.attempts.map((a: any) => [a.number, a.status_code, a.response_body])).toEqual([
      [1, 500, "broken"],
      [2, 500, "broken"],
      [3, 500, "broken"],
      [4, 200, ""],
    ]);
    // Each retry came no sooner than its wait in the schedule.
    for (let i = 1; i < got.length; i++) expect(got[i]!.receivedAt - got[i - 1]!.receivedAt).toBeGreaterThanOrEqual(SCHEDULE[i - 1]!);
    expect(await webhookStatus(acct, hook.id)).toBe("active");
    // The same body each time; each signature verifies.
    expect(new Set(got.map((g) => g.rawBody)).size).toBe(1);
    for (const g of got) expect(verifyParleySignature(g.headers["x-parley-signature"] as string, g.rawBody, hook.secret)).toBe(true);
  });

  it("fails after the schedule's five retries (six attempts), counting a timeout, a redirect and a connection refused as failures", async () => {
    const acct = await app.account();
    const r = await receiver();
    const target = await receiver();
    r.answer((_req, i) => (i === 0 ? "hang" : i === 1 ? { status: 302, headers: { location: target.url } } : { status: 502 }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.deleted");
    const [delivery] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "failed", "failed", 15_000);

    expect(delivery.attempts).toHaveLength(6);
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: "no answer within 1000 ms (timed out)" });
    expect(delivery.attempts[1]).toMatchObject({ status_code: 302, error: "redirects are not followed" });
    expect(delivery.attempts.slice(2).map((a: any) => a.status_code)).toEqual([502, 502, 502, 502]);
    expect(target.received).toEqual([]);
    expect(delivery.completed_at).not.toBeNull();
    expect(await webhookStatus(acct, hook.id)).toBe("failing");

    // Nothing listening: refused, logged as such.
    const closed = await receiver();
    const deadUrl = closed.url;
    await closed.close();
    const dead = await webhook(acct, deadUrl, ["agent.created"]);
    await emit(acct, "agent.created");
    const [refused] = await until(() => deliveries(acct, dead.id), (d) => d[0]?.attempts.length > 0, "an attempt");
    expect(refused.attempts[0]).toMatchObject({ status_code: null, error: "connection refused" });
  }, 20_000);

  it("honours a 429 or 503's Retry-After, within the schedule's bounds", async () => {
    const acct = await app.account();
    const r = await receiver();
    r.answer((_req, i) => (i === 0 ? { status: 503, headers: { "retry-after": "1" } } : i === 1 ? { status: 429, headers: { "retry-after": "3600" } } : { status: 200 }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created");
    const got = await r.waitFor(3);
    // Both asked for longer than their step (30 ms, 60 ms): each waited the schedule's longest step instead, no more.
    const longest = Math.max(...SCHEDULE);
    expect(got[1]!.receivedAt - got[0]!.receivedAt).toBeGreaterThanOrEqual(longest);
    expect(got[2]!.receivedAt - got[1]!.receivedAt).toBeGreaterThanOrEqual(longest);
    const [delivery] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "delivered", "delivered");
    expect(delivery.attempts.map((a: any) => a.status_code)).toEqual([503, 429, 200]);
  });

  it("keeps only the start of a long answer in the log", async () => {
    const acct = await app.account();
    const r = await receiver();
    r.answer(() => ({ status: 200, body: "x".repeat(100_000) }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created");
    const [delivery] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "delivered", "delivered");
    expect(delivery.attempts[0].response_body).toBe("x".repeat(1024));
  });
});

describe("a webhook that keeps failing", () => {
  it("is disabled after 10 failed attempts in a row across deliveries: its waiting deliveries are skipped and it receives nothing more until re-enabled", async () => {
    const acct = await app.account();
    const r = await receiver();
    r.answer(() => ({ status: 500 }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created");
    await emit(acct, "agent.updated");
    await until(() => webhookStatus(acct, hook.id), (s) => s === "inactive", "inactive", 15_000);

    const all = await until(() => deliveries(acct, hook.id), (d) => d.every((x) => x.status !== "pending" && x.status !== "sending"), "settled");
    // The 10th failure disabled it; an attempt already in flight then may have made an 11th.
    const attempts = all.reduce((n, d) => n + d.attempts.length, 0);
    expect(attempts).toBeGreaterThanOrEqual(10);
    expect(attempts).toBeLessThanOrEqual(11);
    expect(all.map((d) => d.status)).toContain("skipped");
    expect(all.every((d) => d.status === "failed" || d.status === "skipped")).toBe(true);
    const before = r.received.length;
    expect(before).toBe(attempts);

    // Disabled: an event now gets no delivery at all.
    await emit(acct, "agent.deleted");
    expect((await deliveries(acct, hook.id)).map((d) => d.event)).not.toContain("agent.deleted");
    // Re-enabled: new events flow again, and the count starts afresh.
    r.answer(() => ({ status: 200 }));
    expect((await app.request("PATCH", `/v1/webhooks/${hook.id}`, { key: acct.key, body: { status: "active" } })).status).toBe(200);
    await emit(acct, "credits.low");
    const got = await r.waitFor(before + 1);
    expect(got.slice(before).map((g) => g.event)).toEqual(["credits.low"]);
    expect(await webhookStatus(acct, hook.id)).toBe("active");
  });

  it("is disabled at once by a 410 Gone", async () => {
    const acct = await app.account();
    const r = await receiver();
    r.answer(() => ({ status: 410 }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created");
    await until(() => webhookStatus(acct, hook.id), (s) => s === "inactive", "inactive");
    const [delivery] = await deliveries(acct, hook.id);
    expect(delivery).toMatchObject({ status: "failed", attempt_count: 1 });
    expect(r.received).toHaveLength(1);
  });
});

describe("receivers do not hold each other back", () => {
  it("a receiver that never answers does not delay deliveries to another", async () => {
    const acct = await app.account();
    const [stuck, fine] = [await receiver(), await receiver()];
    stuck.answer(() => "hang");
    const stuckHook = await webhook(acct, stuck.url, ["agent.updated"]);
    await webhook(acct, fine.url, ["agent.created"]);
    for (let i = 0; i < 10; i++) await emit(acct, "agent.updated", { i });
    await stuck.waitFor(4);
    for (let i = 0; i < 20; i++) await emit(acct, "agent.created", { i });
    await fine.waitFor(20);
    // Every delivery to the healthy receiver arrived while the stuck one's first attempts were still open.
    expect(stuck.open).toBeGreaterThan(0);
    const logged = await deliveries(acct, stuckHook.id, "?limit=100");
    expect(logged.flatMap((d) => d.attempts)).toEqual([]);
  });
});

describe("one account's hanging receivers", () => {
  it("take at most half of the worker's places: another account's deliveries go on", async () => {
    // 8 places in all, 2 per host: four hanging hosts of one account would take all 8.
    const small = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_CONCURRENCY: "8", PARLEY_WEBHOOK_HOST_CONCURRENCY: "2", PARLEY_WEBHOOK_TIMEOUT_MS: "10000" });
    try {
      const emitIn = async (account: TestAccount, name: EventName) => {
        const { db, outbox } = small.parley.services;
        await db.transaction().execute((trx) => outbox.append([{ accountId: account.id, name, data: {} }], trx));
      };
      const attacker = await small.account();
      await small.parley.services.accounts.setLimits(attacker.id, { webhooks: 20 });
      const hanging = await Promise.all([1, 2, 3, 4].map(() => receiver()));
      for (const r of hanging) {
        r.answer(() => "hang");
        expect((await small.request("POST", "/v1/webhooks", { key: attacker.key, body: { url: r.url, events: ["*"] } })).status).toBe(201);
      }
      for (let i = 0; i < 3; i++) await emitIn(attacker, "agent.created");
      const hangingCount = () => hanging.reduce((n, r) => n + r.received.length, 0);
      await until(async () => hangingCount(), (n) => n >= 4, "the attacker's attempts to hang");

      const victim = await small.account();
      const fine = await receiver();
      expect((await small.request("POST", "/v1/webhooks", { key: victim.key, body: { url: fine.url, events: ["*"] } })).status).toBe(201);
      for (let i = 0; i < 5; i++) await emitIn(victim, "agent.updated");
      await fine.waitFor(5);
      // All arrived while the attacker's first attempts were still open, and it never held more than half.
      expect(hanging.reduce((n, r) => n + r.open, 0)).toBe(4);
      expect(hangingCount()).toBe(4);
    } finally {
      // Closing the receivers ends the open attempts, which stopping the service waits for.
      await Promise.all(receivers.splice(0).map((r) => r.close()));
      await small.close();
    }
  });
});

describe("GET /v1/webhooks/{id}/deliveries, redeliver and test", () => {
  it("lists deliveries filtered by status and event, scoped to the caller", async () => {
    const acct = await app.account();
    const r = await receiver();
    r.answer((req) => (req.event === "agent.deleted" ? { status: 410 } : { status: 200 }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created");
    await emit(acct, "agent.updated");
    await until(() => deliveries(acct, hook.id), (d) => d.length === 2 && d.every((x) => x.status === "delivered"), "two delivered");
    await emit(acct, "agent.deleted");
    await until(() => deliveries(acct, hook.id, "?status=failed"), (d) => d.length === 1, "one failed");

    expect((await deliveries(acct, hook.id, "?event=agent.updated")).map((d) => d.event)).toEqual(["agent.updated"]);
    expect((await deliveries(acct, hook.id, "?order=asc")).map((d) => d.event)).toEqual(["agent.created", "agent.updated", "agent.deleted"]);
    const page = await app.request("GET", `/v1/webhooks/${hook.id}/deliveries?limit=2`, { key: acct.key });
    expect(page.body).toMatchObject({ has_more: true, total: 3 });
    const rest = await app.request("GET", `/v1/webhooks/${hook.id}/deliveries?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`, { key: acct.key });
    expect(rest.body.data).toHaveLength(1);
    expect(errorOf(await app.request("GET", `/v1/webhooks/${hook.id}/deliveries?status=lost`, { key: acct.key })).code).toBe("invalid_status");

    const stranger = await app.account();
    expect((await app.request("GET", `/v1/webhooks/${hook.id}/deliveries`, { key: stranger.key })).status).toBe(403);
    const reader = await app.key(acct.id, ["agents:read"]);
    expect((await app.request("GET", `/v1/webhooks/${hook.id}/deliveries`, { key: reader })).status).toBe(403);
  });

  it("redelivers a delivered or failed delivery now: same id and body, a fresh signature; 409 while one is waiting", async () => {
    const acct = await app.account();
    const r = await receiver();
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created", { id: "agent_1" });
    const [first] = await r.waitFor(1);
    const [delivery] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "delivered", "delivered");

    await new Promise((resolve) => setTimeout(resolve, 1100)); // a later second, for a fresh signature timestamp
    const again = await app.request("POST", `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`, { key: acct.key });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ id: delivery.id, status: "delivered", attempt_count: 2 });
    const second = r.received[1]!;
    expect(second.delivery).toBe(first!.delivery);
    expect(second.rawBody).toBe(first!.rawBody);
    const t = (h: unknown) => Number(/t=(\d+)/.exec(String(h))![1]);
    expect(t(second.headers["x-parley-signature"])).toBeGreaterThan(t(first!.headers["x-parley-signature"]));
    expect(verifyParleySignature(second.headers["x-parley-signature"] as string, second.rawBody, hook.secret)).toBe(true);

    // A delivery being sent (its receiver has not answered yet) cannot be redelivered out of turn.
    r.answer(() => "hang");
    await emit(acct, "agent.updated");
    await r.waitFor(3);
    const [sending] = await deliveries(acct, hook.id, "?event=agent.updated");
    expect(sending.status).toBe("sending");
    const busy = await app.request("POST", `/v1/webhooks/${hook.id}/deliveries/${sending.id}/redeliver`, { key: acct.key });
    expect(busy.status).toBe(409);
    expect(errorOf(busy).code).toBe("delivery_in_progress");
    expect(errorOf(await app.request("POST", `/v1/webhooks/${hook.id}/deliveries/dlv_unknown/redeliver`, { key: acct.key })).code).toBe("delivery_not_found");
  });

  it("sends a test event now and answers its outcome, without moving the webhook's status", async () => {
    const acct = await app.account();
    const r = await receiver();
    const hook = await webhook(acct, r.url, ["call.completed"]);
    const ok = await app.request("POST", `/v1/webhooks/${hook.id}/test`, { key: acct.key });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ event: "webhook.test", status: "delivered", attempt_count: 1 });
    expect(ok.body.attempts[0]).toMatchObject({ number: 1, status_code: 200 });
    expect(r.received.map((g) => g.event)).toEqual(["webhook.test"]);
    expect(r.received[0]!.body.data).toMatchObject({ webhook_id: hook.id });
    expect(verifyParleySignature(r.received[0]!.headers["x-parley-signature"] as string, r.received[0]!.rawBody, hook.secret)).toBe(true);

    r.answer(() => ({ status: 500, body: "down for maintenance" }));
    const bad = await app.request("POST", `/v1/webhooks/${hook.id}/test`, { key: acct.key });
    expect(bad.body).toMatchObject({ status: "failed", attempts: [{ status_code: 500, response_body: "down for maintenance" }] });
    expect(await webhookStatus(acct, hook.id)).toBe("active");
    expect(r.received).toHaveLength(2);
    const reader = await app.key(acct.id, ["webhooks:read"]);
    expect((await app.request("POST", `/v1/webhooks/${hook.id}/test`, { key: reader })).status).toBe(403);
  });
});

describe("disabling or deleting a webhook", () => {
  it("skips its waiting deliveries when disabled, and deletes them (and their log) with it, even mid-attempt", async () => {
    const acct = await app.account();
    const r = await receiver();
    r.answer(() => ({ status: 500 }));
    const hook = await webhook(acct, r.url);
    await emit(acct, "agent.created");
    await r.waitFor(1);
    expect((await app.request("PATCH", `/v1/webhooks/${hook.id}`, { key: acct.key, body: { status: "inactive" } })).status).toBe(200);
    const [skipped] = await until(() => deliveries(acct, hook.id), (d) => d[0]?.status === "skipped", "skipped");
    expect(skipped.next_attempt_at).toBeNull();
    const tried = r.received.length;

    // Deleted while an attempt is open: the attempt's end writes nothing, and nothing is left.
    expect((await app.request("PATCH", `/v1/webhooks/${hook.id}`, { key: acct.key, body: { status: "active" } })).status).toBe(200);
    r.answer(() => "hang");
    await emit(acct, "agent.updated");
    await r.waitFor(tried + 1);
    expect((await app.request("DELETE", `/v1/webhooks/${hook.id}`, { key: acct.key })).status).toBe(200);
    const { db } = app.parley.services;
    const left = async () => ({
      deliveries: (await db.selectFrom("deliveries").select("id").where("webhook_id", "=", hook.id).execute()).length,
      attempts: (await db.selectFrom("delivery_attempts").select("delivery_id").where("delivery_id", "=", skipped.id).execute()).length,
    });
    expect(await left()).toEqual({ deliveries: 0, attempts: 0 });
    await r.close(); // ends the open attempt
    await until(async () => app.parley.services.webhookDelivery.inFlight, (n) => n === 0, "the attempt's end");
    expect(await left()).toEqual({ deliveries: 0, attempts: 0 });
    expect((await app.request("GET", `/v1/webhooks/${hook.id}/deliveries`, { key: acct.key })).status).toBe(404);
  });
});

describe("secrets", () => {
  it("never appear in the service's logs or the delivery log, through failures, disabling, tests and redeliveries", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "trace" }, { write: (line: string) => void lines.push(line) });
    const logged = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_RETRY_SCHEDULE: "10ms,10ms,10ms,10ms,10ms" }, logger);
    try {
      const acct = await logged.account();
      const r = await receiver();
      // The receiver echoes what it got, headers included, into the delivery log.
      r.answer((req) => ({ status: 500, body: JSON.stringify(req.headers) }));
      const secret = "whsec_never_logged_0123456789abcdef";
      const hook = await logged.request("POST", "/v1/webhooks", { key: acct.key, body: { url: r.url, events: ["*"], secret } });
      const signingSecret = (await logged.request("GET", "/v1/account", { key: acct.key })).body.signing_secret as string;
      await logged.request("POST", `/v1/webhooks/${hook.body.id}/test`, { key: acct.key });
      const { db, outbox } = logged.parley.services;
      for (let i = 0; i < 2; i++) await db.transaction().execute((trx) => outbox.append([{ accountId: acct.id, name: "agent.created", data: {} }], trx));
      await until(async () => (await logged.request("GET", `/v1/webhooks/${hook.body.id}`, { key: acct.key })).body.status, (s) => s === "inactive", "inactive");
      const list = await logged.request("GET", `/v1/webhooks/${hook.body.id}/deliveries?limit=100`, { key: acct.key });
      await logged.request("POST", `/v1/webhooks/${hook.body.id}/deliveries/${list.body.data[0].id}/redeliver`, { key: acct.key });

      expect(lines.join("\n")).toContain("webhook disabled after failed deliveries");
      const attempts = await db.selectFrom("delivery_attempts").selectAll().execute();
      expect(attempts.length).toBeGreaterThan(10);
      for (const text of [lines.join("\n"), JSON.stringify(attempts), JSON.stringify(list.body)]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(signingSecret);
        expect(text).not.toContain(acct.key);
      }
    } finally {
      await logged.close();
    }
  });
});

describe("every attempt checks where it goes", () => {
  it("sends nothing to a stored URL that now points into the service's networks, by literal or by a name that re-resolves (DNS rebinding)", async () => {
    // Loopback is not allowed here; the resolver answers a public address first, then loopback.
    let rebound = false;
    const resolver = async () => [{ address: rebound ? "127.0.0.1" : "93.184.216.34", family: 4 }];
    const guarded = await startTestApp({}, { PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "0", PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_RETRY_SCHEDULE: "none" }, undefined, { hostResolver: resolver });
    const r = await receiver();
    try {
      const acct = await guarded.account();
      const port = new URL(r.url).port;
      const created = await guarded.request("POST", "/v1/webhooks", { key: acct.key, body: { url: `https://rebinding.example:${port}/hook`, events: ["*"] } });
      expect(created.status).toBe(201);
      const literal = await guarded.request("POST", "/v1/webhooks", { key: acct.key, body: { url: "https://hooks.example.com/hook", events: ["*"] } });
      rebound = true;
      // As if stored before the rules changed: a literal private address.
      await guarded.parley.services.db.updateTable("webhooks").set({ url: "https://10.0.0.5/hook" }).where("id", "=", literal.body.id).execute();
      const { db, outbox } = guarded.parley.services;
      await db.transaction().execute((trx) => outbox.append([{ accountId: acct.id, name: "agent.created", data: {} }], trx));

      const attemptsOf = async (id: string) => (await guarded.request("GET", `/v1/webhooks/${id}/deliveries`, { key: acct.key })).body.data[0]?.attempts ?? [];
      const [viaName] = await until(() => attemptsOf(created.body.id), (a) => a.length > 0, "an attempt");
      const [viaLiteral] = await until(() => attemptsOf(literal.body.id), (a) => a.length > 0, "an attempt");
      expect(viaName).toMatchObject({ status_code: null, error: expect.stringMatching(/rebinding\.example resolves to an address webhooks may not reach: 127\.0\.0\.1 is a loopback address/) });
      expect(viaLiteral).toMatchObject({ status_code: null, error: expect.stringMatching(/^not sent: 10\.0\.0\.5 is a private address/) });
      expect(r.received).toEqual([]);
    } finally {
      await guarded.close();
    }
  });
});

describe("test events and redeliveries take the worker's places", () => {
  /** A receiver holding every request open until `release`, and the most it ever had open at once. */
  async function heldReceiver() {
    const r = await receiver();
    let release!: (answer: { status: number }) => void;
    const held = new Promise<{ status: number }>((resolve) => (release = resolve));
    const seen = { maxOpen: 0 };
    r.answer(() => {
      seen.maxOpen = Math.max(seen.maxOpen, r.open);
      return held;
    });
    return { r, seen, release: () => release({ status: 200 }) };
  }

  /** Starts the requests all at once; `settled` fills as their answers come. */
  function fire(count: number, send: (i: number) => Promise<ApiResponse>) {
    const settled: Array<ApiResponse> = [];
    const all = Promise.all(Array.from({ length: count }, (_, i) => send(i).then((res) => (settled.push(res), res))));
    return { settled, all };
  }

  const listIn = async (own: TestApp, account: TestAccount, webhookId: string, query = "") => {
    const res = await own.request("GET", `/v1/webhooks/${webhookId}/deliveries${query}`, { key: account.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as any[];
  };

  function expectRefused(res: ApiResponse) {
    expect(res.status, JSON.stringify(res.body)).toBe(429);
    expect(errorOf(res).code).toBe("rate_limit_exceeded");
    expect(res.body.meta.request_id).toEqual(expect.any(String));
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  }

  it("one account's 20 concurrent tests: at most 2 reach a receiver that does not answer, the rest are refused with 429 and store nothing; after it answers a new test goes", async () => {
    const own = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_TIMEOUT_MS: "10000" });
    const { r, seen, release } = await heldReceiver();
    try {
      const acct = await own.account();
      const hook = (await own.request("POST", "/v1/webhooks", { key: acct.key, body: { url: r.url, events: ["*"] } })).body.id as string;
      const { settled, all } = fire(20, () => own.request("POST", `/v1/webhooks/${hook}/test`, { key: acct.key }));
      // Each request is either answered at once or held by the receiver.
      await until(async () => settled.length + r.received.length, (n) => n >= 20, "every request answered or received");
      expect(settled).toHaveLength(18);
      for (const res of settled) expectRefused(res);
      expect(r.received).toHaveLength(2);
      expect(seen.maxOpen).toBe(2);
      // The refused tests stored no event and no delivery.
      const { db } = own.parley.services;
      expect((await db.selectFrom("deliveries").select("id").where("webhook_id", "=", hook).execute()).length).toBe(2);
      expect((await db.selectFrom("events").select("id").where("account_id", "=", acct.id).where("name", "=", "webhook.test").execute()).length).toBe(2);

      release();
      const answered = (await all).filter((res) => res.status === 200);
      expect(answered.map((res) => res.body.status)).toEqual(["delivered", "delivered"]);
      const again = await own.request("POST", `/v1/webhooks/${hook}/test`, { key: acct.key });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body).toMatchObject({ event: "webhook.test", status: "delivered" });
      expect(r.received).toHaveLength(3);
    } finally {
      release();
      await own.close();
    }
  });

  it("hold their receiver host's places, shared between accounts and with scheduled deliveries", async () => {
    const own = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_TIMEOUT_MS: "10000", PARLEY_WEBHOOK_HOST_CONCURRENCY: "3" });
    const { r, seen, release } = await heldReceiver();
    try {
      const accounts = [await own.account(), await own.account()];
      const hooks: string[] = [];
      for (const acct of accounts) hooks.push((await own.request("POST", "/v1/webhooks", { key: acct.key, body: { url: r.url, events: ["agent.created"] } })).body.id);
      const { settled, all } = fire(10, (i) => own.request("POST", `/v1/webhooks/${hooks[i % 2]}/test`, { key: accounts[i % 2]!.key }));
      await until(async () => settled.length + r.received.length, (n) => n >= 10, "every request answered or received");
      expect(settled).toHaveLength(7);
      for (const res of settled) expectRefused(res);
      expect(seen.maxOpen).toBe(3);
      // No account had more than its 2 manual attempts under way.
      const perHook = hooks.map((id) => r.received.filter((got) => got.body.webhook_id === id).length);
      expect(perHook.sort()).toEqual([1, 2]);

      // A scheduled delivery to the full host waits for a place too, and goes once one frees.
      const { db, outbox } = own.parley.services;
      await db.transaction().execute((trx) => outbox.append([{ accountId: accounts[0]!.id, name: "agent.created", data: {} }], trx));
      const waiting = await db.selectFrom("deliveries").select(["status", "attempt_count"]).where("webhook_id", "=", hooks[0]!).where("event_name", "=", "agent.created").executeTakeFirstOrThrow();
      expect(waiting).toEqual({ status: "pending", attempt_count: 0 });
      expect(r.received).toHaveLength(3);
      release();
      await all;
      const [scheduled] = await until(() => listIn(own, accounts[0]!, hooks[0]!, "?event=agent.created"), (d) => d[0]?.status === "delivered", "the scheduled delivery");
      expect(scheduled.attempt_count).toBe(1);
      expect(seen.maxOpen).toBe(3);
    } finally {
      release();
      await own.close();
    }
  });

  it("a redelivery is refused with 429 when its account has 2 under way, and its delivery is left as it was", async () => {
    const own = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_TIMEOUT_MS: "10000" });
    const r = await receiver();
    try {
      const acct = await own.account();
      const hook = (await own.request("POST", "/v1/webhooks", { key: acct.key, body: { url: r.url, events: ["*"] } })).body.id as string;
      const { db, outbox } = own.parley.services;
      for (let i = 0; i < 3; i++) await db.transaction().execute((trx) => outbox.append([{ accountId: acct.id, name: "agent.created", data: { i } }], trx));
      const done = await until(() => listIn(own, acct, hook), (d) => d.length === 3 && d.every((x) => x.status === "delivered"), "three delivered");

      let release!: () => void;
      const held = new Promise<{ status: number }>((resolve) => (release = () => resolve({ status: 200 })));
      r.answer(() => held);
      const { settled, all } = fire(3, (i) => own.request("POST", `/v1/webhooks/${hook}/deliveries/${done[i].id}/redeliver`, { key: acct.key }));
      try {
        await until(async () => settled.length + r.received.length - 3, (n) => n >= 3, "every request answered or received");
        expect(settled).toHaveLength(1);
        expectRefused(settled[0]!);
        expect(r.received).toHaveLength(5);
        const after = await listIn(own, acct, hook);
        expect(after.map((d) => d.status).sort()).toEqual(["delivered", "sending", "sending"]);
        expect(after.find((d) => d.status === "delivered").attempt_count).toBe(1);
      } finally {
        release();
      }
      expect((await all).filter((res) => res.status === 200)).toHaveLength(2);
    } finally {
      await own.close();
    }
  });
});
