import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsRepository } from "../../src/db/repositories/events.js";
import type { LiveCallStart } from "../../src/services/live-calls.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// A call holds the credit of the minutes it has started until it is charged at its end, so the
// calls of one account cannot together spend more than its balance. What call creation checked
// is checked again when a queued call is dialled.

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

let numbersMade = 0;

async function accountWithAgent(credits: number) {
  const acct = await app.account({ credits });
  // Each account its own active number, to call from.
  const number = await app.activeNumber(acct.key, { phone_number: `+1415555${String(7000 + numbersMade++).padStart(4, "0")}`, country: "US" });
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Desk", system_prompt: "You answer.", voice_id: "flite-slt" } });
  expect(agent.status).toBe(201);
  const { accounts, agents } = app.parley.services;
  const liveSetup = async (): Promise<LiveCallStart> => ({
    account: (await accounts.find(acct.id))!,
    agent: await agents.get(acct.id, agent.body.id),
    direction: "web",
    phoneNumber: null,
    fromNumber: null,
    record: false,
    maxDuration: 3600,
    metadata: {},
    context: {},
  });
  /** Queued calls from the account's number, oldest first, as the API stores them. */
  const queue = async (count: number, to = "+14155550123") => {
    const rows = [];
    for (let i = 0; i < count; i++) {
      rows.push(
        await insertCallRow(app.parley.services.db, {
          account_id: acct.id,
          agent_id: agent.body.id,
          status: "queued",
          from_number: number.phone_number,
          phone_number: to,
          created_at: `2026-01-05T10:00:0${i}.000Z`,
        }),
      );
    }
    return rows;
  };
  return { acct, agentId: agent.body.id as string, number, liveSetup, queue };
}

describe("credit held by calls under way", () => {
  it("refuses a second connected call while the first holds the account's only credit, and frees it when the first is charged", async () => {
    const { acct, liveSetup } = await accountWithAgent(1);
    const { liveCalls, accounts } = app.parley.services;
    const first = await liveCalls.begin(await liveSetup());
    await expect(liveCalls.begin(await liveSetup())).rejects.toMatchObject({ status: 402, code: "insufficient_credits", message: expect.stringContaining("held by the account's calls under way") });

    await liveCalls.end(first.id, { status: "completed", durationMs: 30_000, transcript: [], recordingPath: null });
    expect((await accounts.find(acct.id))!.credit_balance).toBe(0);
    await expect(liveCalls.begin(await liveSetup())).rejects.toMatchObject({ status: 402, code: "insufficient_credits" });

    await accounts.addCredits(acct.id, 1);
    const again = await liveCalls.begin(await liveSetup());
    expect(again.status).toBe("in_progress");
    expect(await app.parley.services.reservations.heldBy(acct.id)).toBe(1);
  });

  it("checks credit again when queued calls are dialled: those the balance no longer covers fail with reason insufficient_credits", async () => {
    const { acct, queue } = await accountWithAgent(1);
    const { db, callLifecycle, reservations } = app.parley.services;
    const queued = await queue(3);
    const dialled = await callLifecycle.claimNext(acct.id);
    expect(dialled?.id).toBe(queued[0]!.id);
    expect(await callLifecycle.claimNext(acct.id)).toBeNull();
    const statuses = await db.selectFrom("calls").select(["id", "status", "billed_credits"]).where("account_id", "=", acct.id).orderBy("created_at").execute();
    expect(statuses.map((c) => c.status)).toEqual(["ringing", "failed", "failed"]);
    expect(statuses.map((c) => c.billed_credits)).toEqual([null, null, null]);

    const events = await new EventsRepository(db).forCall(queued[1]!.id);
    expect(events.map((e) => e.name)).toEqual(["call.failed"]);
    expect(events[0]!.data).toMatchObject({ status: "failed", reason: "insufficient_credits" });

    // The dialled call's credit is free again once it ends unanswered.
    expect(await reservations.heldBy(acct.id)).toBe(1);
    await callLifecycle.unanswered(queued[0]!.id, "no_answer");
    expect(await reservations.heldBy(acct.id)).toBe(0);
  });
});

describe("credit holds left behind", () => {
  it("are deleted when a node starts if their call is no longer live (a stop between its end and the release), and kept while it is", async () => {
    const { acct, liveSetup } = await accountWithAgent(2);
    const { db, liveCalls, nodes, reservations } = app.parley.services;
    const running = await liveCalls.begin(await liveSetup());
    const ended = await liveCalls.begin(await liveSetup());
    // The running call is another node's, alive: starting this node leaves it alone (its own it would close).
    await db.insertInto("nodes").values({ id: "node_alive_elsewhere", started_at: new Date().toISOString(), heartbeat_at: Date.now(), stopped_at: null }).execute();
    await db.updateTable("calls").set({ node_id: "node_alive_elsewhere" }).where("id", "=", running.id).execute();
    // As a process stopping right after storing the end would leave it: ended, its hold still there.
    await db.updateTable("calls").set({ status: "completed", ended_at: new Date().toISOString() }).where("id", "=", ended.id).execute();
    await expect(liveCalls.begin(await liveSetup())).rejects.toMatchObject({ status: 402, code: "insufficient_credits" });

    await nodes.start();
    await nodes.stop({ graceful: true });
    expect(await reservations.minutesOf(ended.id)).toBe(0);
    expect(await reservations.minutesOf(running.id)).toBe(1);
    expect(await reservations.heldBy(acct.id)).toBe(1);
    expect((await liveCalls.begin(await liveSetup())).status).toBe("in_progress");
  });
});

describe("checks again as a queued call is dialled", () => {
  it("fails a queued call whose from_number was released meanwhile (invalid_from_number), and one whose country is no longer allowed (invalid_phone_number)", async () => {
    const { acct, number, queue } = await accountWithAgent(100);
    const { db, callLifecycle } = app.parley.services;
    const [call] = await queue(1);
    const released = await app.request("DELETE", `/v1/phone-numbers/${number.id}`, { key: acct.key });
    expect(released.status).toBe(200);
    expect(await callLifecycle.claimNext(acct.id)).toBeNull();
    expect((await new EventsRepository(db).forCall(call!.id)).map((e) => [e.name, e.data.reason])).toEqual([["call.failed", "invalid_from_number"]]);

    // A UK number to call from, and a call to the US queued while the US number was still held.
    const uk = await app.activeNumber(acct.key, { phone_number: "+442071838750", country: "GB" });
    const toUs = await insertCallRow(db, { account_id: acct.id, agent_id: call!.agent_id, status: "queued", from_number: uk.phone_number, phone_number: "+14155550123" });
    expect(await callLifecycle.claimNext(acct.id)).toBeNull();
    expect((await new EventsRepository(db).forCall(toUs.id)).map((e) => [e.name, e.data.reason])).toEqual([["call.failed", "invalid_phone_number"]]);
    expect((await db.selectFrom("calls").select("status").where("id", "=", toUs.id).executeTakeFirstOrThrow()).status).toBe("failed");
  });
});
