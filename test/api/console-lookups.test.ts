import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// What the console reads without scanning: the caller's own key, one call's events, and the
// deliveries of one call's events to a webhook. Each scoped to the caller's account.

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  // No receiver listens: deliveries are written and fail, which these tests do not look at.
  app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_RETRY_SCHEDULE: "none" });
  acct = await app.account();
  other = await app.account();
});
afterAll(() => app.close());

/** Stores call events as the call lifecycle does: through the outbox, with their deliveries. */
async function callEvents(account: TestAccount, callId: string, names: Array<"call.started" | "call.completed">): Promise<void> {
  const { outbox, db } = app.parley.services;
  await outbox.append(
    names.map((name) => ({ accountId: account.id, name, callId, data: { call_id: callId } })),
    db,
  );
}

describe("GET /v1/account/key", () => {
  it("tells any valid key its own name and permissions, never its secret", async () => {
    const reader = await app.key(acct.id, ["calls:read", "agents:read"]);
    const res = await app.request("GET", "/v1/account/key", { key: reader });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(/^key_/), name: expect.any(String), key_prefix: reader.slice(0, res.body.key_prefix.length), permissions: ["calls:read", "agents:read"], created_at: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toContain(reader);
    expect((await app.request("GET", "/v1/account/key", { key: acct.key })).body.permissions).toEqual(["*"]);
    expect(errorOf(await app.request("GET", "/v1/account/key", { key: "sk_live_nope" })).code).toBe("invalid_api_key");
  });
});

describe("call filters on events and deliveries", () => {
  it("GET /v1/events?call_id= lists that call's events only, and none of another account's", async () => {
    await callEvents(acct, "call_aaaaaaaaaaaaaaaaaaaa", ["call.started", "call.completed"]);
    await callEvents(acct, "call_bbbbbbbbbbbbbbbbbbbb", ["call.started"]);
    await callEvents(other, "call_cccccccccccccccccccc", ["call.started"]);
    const mine = await app.request("GET", "/v1/events?call_id=call_aaaaaaaaaaaaaaaaaaaa", { key: acct.key });
    expect(mine.status).toBe(200);
    // One append stores both at the same instant (the list's order is then the ids').
    expect(mine.body.data.map((e: any) => [e.event, e.call_id]).sort()).toEqual([
      ["call.completed", "call_aaaaaaaaaaaaaaaaaaaa"],
      ["call.started", "call_aaaaaaaaaaaaaaaaaaaa"],
    ]);
    expect(mine.body.total).toBe(2);
    const theirs = await app.request("GET", "/v1/events?call_id=call_cccccccccccccccccccc", { key: acct.key });
    expect(theirs.body).toMatchObject({ data: [], total: 0 });
    const empty = await app.request("GET", "/v1/events?call_id=", { key: acct.key });
    expect(empty.status).toBe(400);
    expect(errorOf(empty).message).toContain("call_id");
  });

  it("GET /v1/webhooks/{id}/deliveries?call_id= lists the deliveries of that call's events to that webhook", async () => {
    const account = await app.account();
    const hook = await app.request("POST", "/v1/webhooks", { key: account.key, body: { url: "http://127.0.0.1:9/hook", events: ["*"] } });
    expect(hook.status).toBe(201);
    await callEvents(account, "call_dddddddddddddddddddd", ["call.started", "call.completed"]);
    await callEvents(account, "call_eeeeeeeeeeeeeeeeeeee", ["call.started"]);
    const path = `/v1/webhooks/${hook.body.id}/deliveries`;
    const all = await app.request("GET", path, { key: account.key });
    expect(all.body.total).toBe(3);
    const one = await app.request("GET", `${path}?call_id=call_dddddddddddddddddddd&order=asc`, { key: account.key });
    expect(one.status).toBe(200);
    // One append writes both at the same instant: their order is the ids'.
    expect(one.body.data.map((d: any) => d.event).sort()).toEqual(["call.completed", "call.started"]);
    const events = await app.request("GET", "/v1/events?call_id=call_dddddddddddddddddddd", { key: account.key });
    expect(one.body.data.map((d: any) => d.event_id).sort()).toEqual(events.body.data.map((e: any) => e.id).sort());
    // Another account's webhook stays out of reach, filter or not.
    expect((await app.request("GET", `${path}?call_id=call_dddddddddddddddddddd`, { key: other.key })).status).toBe(403);
  });
});
