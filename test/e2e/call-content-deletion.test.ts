import { existsSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CallsRepository } from "../../src/db/repositories/calls.js";
import { deliveryAnswersOf, insertCallRow } from "../helpers/call-rows.js";
import { stringsInDataFiles } from "../helpers/data-file-grep.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { upgrade, type UpgradeOutcome } from "../helpers/ws-upgrade.js";

/**
 * DELETE /v1/calls/{id}: a privacy request removes what was said on an ended call (recording,
 * transcript, analysis, and the same content in its stored events); the billing record stays.
 * A real call through the engine over /media/ws makes the content first. Nothing of it is
 * left in the database's files afterwards (read as bytes): see the second describe.
 */

vi.setConfig({ testTimeout: 30_000 });

let app: TestApp;
let acct: TestAccount;
let agentId: string;

beforeAll(async () => {
  // Campaigns dial at once and round the clock here (see the second describe).
  app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_CAMPAIGN_POLL_MS: "50" });
  acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello {{customer_name}}, Acme Dental here." } });
  agentId = agent.body.id;
});
afterAll(() => app.close());

/** A native call that has heard the agent's greeting. */
async function greetedCall(): Promise<{ call: UpgradeOutcome; callId: string }> {
  const context = encodeURIComponent(JSON.stringify({ customer_name: "Ada" }));
  const call = await upgrade(`${app.baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agentId}&context=${context}`, { authorization: `Bearer ${acct.key}` });
  expect(call.status).toBe(101);
  for (let i = 0; i < 200 && !call.messages.some((m) => m.type === "transcript" && m.role === "agent"); i++) await new Promise((r) => setTimeout(r, 50));
  return { call, callId: call.messages[0].call_id };
}

async function hangUp(call: UpgradeOutcome, callId: string): Promise<void> {
  const closed = new Promise((resolve) => call.socket!.once("close", resolve));
  call.socket!.send(JSON.stringify({ type: "hangup" }));
  await closed;
  await ended(callId, ["completed"]);
}

/** Waits until the call is stored in one of `statuses` with its analysis written. */
async function ended(callId: string, statuses: readonly string[]): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const row = await app.parley.services.db.selectFrom("calls").select(["status", "analysis_pending"]).where("id", "=", callId).executeTakeFirst();
    if (row && statuses.includes(row.status) && !row.analysis_pending) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`call ${callId}'s end was not stored`);
}

describe("DELETE /v1/calls/{id}", () => {
  it("refuses a live call (409 call_not_ended), other accounts and read-only keys; then removes the content and keeps the bill", async () => {
    const { call, callId } = await greetedCall();
    const live = await app.request("DELETE", `/v1/calls/${callId}`, { key: acct.key });
    expect(live.status).toBe(409);
    expect(errorOf(live)).toMatchObject({ code: "call_not_ended", message: expect.stringContaining(`/v1/calls/${callId}/end`) });
    await hangUp(call, callId);

    const before = (await app.request("GET", `/v1/calls/${callId}?include=transcript,recording,analysis`, { key: acct.key })).body;
    expect(before.transcript[0]).toMatchObject({ role: "agent", content: "Hello Ada, Acme Dental here." });
    expect(before.recording_url).toEqual(expect.any(String));
    expect(before.analysis).not.toBeNull();
    const row = await app.parley.services.db.selectFrom("calls").selectAll().where("id", "=", callId).executeTakeFirstOrThrow();
    expect(existsSync(row.recording_path!)).toBe(true);
    const ledgerBefore = (await app.request("GET", "/v1/account/ledger", { key: acct.key })).body.data;

    const other = await app.account();
    expect((await app.request("DELETE", `/v1/calls/${callId}`, { key: other.key })).status).toBe(403);
    const reader = await app.key(acct.id, ["calls:read"]);
    expect((await app.request("DELETE", `/v1/calls/${callId}`, { key: reader })).status).toBe(403);
    expect(existsSync(row.recording_path!)).toBe(true);

    const deleted = await app.request("DELETE", `/v1/calls/${callId}`, { key: acct.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: callId, status: "completed", duration: before.duration });

    const after = (await app.request("GET", `/v1/calls/${callId}?include=transcript,recording,analysis`, { key: acct.key })).body;
    expect(after).toMatchObject({ transcript: [], recording_url: null, analysis: null, duration: before.duration, status: "completed" });
    expect(existsSync(row.recording_path!)).toBe(false);
    const stored = await app.parley.services.db.selectFrom("calls").selectAll().where("id", "=", callId).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ transcript: null, recording_path: null, analysis: null, actions: null, context: "{}", billed_credits: row.billed_credits, duration: row.duration });
    // The stored events no longer carry what was said; nothing of the greeting is left anywhere in them.
    const events = (await app.request("GET", `/v1/events?call_id=${callId}&limit=100`, { key: acct.key })).body.data;
    expect(events.map((e: any) => e.event)).toContain("call.transcript.ready");
    expect(JSON.stringify(events)).not.toContain("Acme Dental here");
    expect(events.find((e: any) => e.event === "call.completed").data).toMatchObject({ transcript: "", summary: null, recording_url: null, duration_seconds: before.duration });
    // The bill is untouched.
    expect((await app.request("GET", "/v1/account/ledger", { key: acct.key })).body.data).toEqual(ledgerBefore);

    // Again: nothing left to remove, same answer.
    expect((await app.request("DELETE", `/v1/calls/${callId}`, { key: acct.key })).status).toBe(200);
    expect((await app.request("DELETE", "/v1/calls/call_doesnotexist0000000", { key: acct.key })).status).toBe(404);
  });
});

describe("what DELETE /v1/calls/{id} leaves in the data files", () => {
  // Distinctive strings, one per place content is copied to; none occurs anywhere else.
  const WEB_NAME = "Zebulon Quaxworth"; // a web call's context, spoken in the greeting: transcript, events
  const WEB_NOTE = "Periwinkle gazebo 7731"; // the same context only: the call's and its token's
  const ECHOED = "ZEBULON QUAXWORTH"; // the receiver's answer to the deliveries (it echoes the transcript in capitals)
  const CONTACT = "Marmaduke Fennimore"; // a campaign contact's context
  const OUTBOUND = "Ignatius Wobblethorpe"; // POST /v1/calls's context, sent with an Idempotency-Key
  const SAID = "Quinoa lighthouse at dawn"; // a stored call's transcript
  const SUMMARY = "Sapphire walrus reviewed"; // its analysis
  const TOOL_ARG = "Obsidian pelican 4417"; // its tool call's arguments
  const MARKERS = [WEB_NAME, WEB_NOTE, ECHOED, CONTACT, OUTBOUND, SAID, SUMMARY, TOOL_ARG];

  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // A receiver that answers with what it got, as many do: the answer is stored in the delivery log.
    receiver.answer((req) => ({ status: 200, body: `got ${String(req.body?.data?.transcript ?? "").toUpperCase()}` }));
  });
  afterAll(() => receiver.close());

  it("removes every copy: the calls, their events, the web call token, the campaign contact, the receivers' answers; the files hold none of it, and GET /v1/campaigns/{id}/contacts no longer shows it", async () => {
    const { db } = app.parley.services;
    const owner = await app.account({ credits: 500 });
    await app.parley.services.phoneNumbers.add(owner.id, { phone_number: "+16505551234", country: "US" } as never);
    const agent = await app.request("POST", "/v1/agents", { key: owner.key, body: { name: "Desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello {{customer_name}}, Acme Dental here." } });
    const hook = await app.request("POST", "/v1/webhooks", { key: owner.key, body: { url: receiver.url, events: ["*"] } });
    expect(hook.status).toBe(201);
    const calls: string[] = [];

    // A browser call: its context rides on the token, then on the call.
    const issued = await app.request("POST", "/v1/calls/web", { key: owner.key, body: { agent_id: agent.body.id, context: { customer_name: WEB_NAME, note: WEB_NOTE } } });
    expect(issued.status).toBe(201);
    const web = await upgrade(`${issued.body.websocket_url.replace(/^ws:\/\/[^/]+/, app.baseUrl.replace(/^http/, "ws"))}&format=pcm16&sample_rate=16000`);
    expect(web.status).toBe(101);
    for (let i = 0; i < 200 && !web.messages.some((m) => m.type === "transcript" && m.role === "agent"); i++) await new Promise((r) => setTimeout(r, 50));
    // Redeemed: the token keeps no context.
    expect((await db.selectFrom("web_call_tokens").select("context").where("call_id", "=", issued.body.call_id).executeTakeFirstOrThrow()).context).toBe("{}");
    await hangUp(web, issued.body.call_id);
    calls.push(issued.body.call_id);

    // An outbound call with a context, sent with an Idempotency-Key (the simulator's +15005551xxx answers and hangs up).
    const outbound = await app.request("POST", "/v1/calls", {
      key: owner.key,
      headers: { "Idempotency-Key": "deletion-outbound-1" },
      body: { agent_id: agent.body.id, phone_number: "+15005551001", context: { customer_name: OUTBOUND } },
    });
    expect(outbound.status, JSON.stringify(outbound.body)).toBe(200);
    await ended(outbound.body.id, ["completed", "failed", "no_answer", "busy"]);
    calls.push(outbound.body.id);

    // A campaign contact with a context, dialled by the runner.
    const campaign = await app.request("POST", "/v1/campaigns", {
      key: owner.key,
      body: { name: "Recall", agent_id: agent.body.id, contacts: [{ phone: "+15005551002", context: { customer_name: CONTACT } }], settings: { calling_hours: { start: "00:00", end: "24:00" } } },
    });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    let contactCall: string | null = null;
    for (let i = 0; i < 400 && !contactCall; i++) {
      const contact = await db.selectFrom("campaign_contacts").select(["call_id", "status"]).where("campaign_id", "=", campaign.body.id).executeTakeFirstOrThrow();
      if (contact.call_id && contact.status !== "calling") contactCall = contact.call_id;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(contactCall).not.toBeNull();
    await ended(contactCall!, ["completed", "failed", "no_answer", "busy"]);
    calls.push(contactCall!);
    const contactsUrl = `/v1/campaigns/${campaign.body.id}/contacts`;
    expect((await app.request("GET", contactsUrl, { key: owner.key })).body.data[0].context).toEqual({ customer_name: CONTACT });

    // A stored call with an analysis and a tool call's arguments, and its end events (delivered too).
    const stored = await insertCallRow(db, {
      account_id: owner.id,
      agent_id: agent.body.id,
      status: "completed",
      transcript: JSON.stringify([{ role: "user", content: SAID, timestamp: 1 }]),
      analysis: JSON.stringify({ summary: SUMMARY, outcome: "appointment_booked", sentiment: "positive", success: true, extracted_data: {} }),
      outcome: "appointment_booked",
      actions: JSON.stringify([{ type: "tool_call", name: "book_appointment", arguments: { customer_name: TOOL_ARG }, result: { ok: true } }]),
      duration: 30,
      billed_credits: 1,
      answered_at: new Date().toISOString(),
      ended_at: new Date().toISOString(),
    });
    await app.parley.services.callEvents.entered((await new CallsRepository(db).findById(stored.id))!, "in_progress", db);
    calls.push(stored.id);

    // Every delivery answered, then: every string is in the files (the search works).
    for (let i = 0; i < 400; i++) {
      const open = await db.selectFrom("deliveries").select("id").where("account_id", "=", owner.id).where("status", "in", ["pending", "sending"]).execute();
      if (open.length === 0 && receiver.received.some((r) => r.body?.data?.call_id === stored.id)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(receiver.received.some((r) => String(r.body?.data?.transcript ?? "").includes(WEB_NAME))).toBe(true);
    expect(stringsInDataFiles(app.dataDir, MARKERS)).toEqual(MARKERS);

    for (const id of calls) expect((await app.request("DELETE", `/v1/calls/${id}`, { key: owner.key })).status).toBe(200);

    // The rows hold none of it...
    expect((await db.selectFrom("campaign_contacts").select("context").where("campaign_id", "=", campaign.body.id).executeTakeFirstOrThrow()).context).toBe("{}");
    expect((await db.selectFrom("web_call_tokens").select("context").where("call_id", "=", issued.body.call_id).executeTakeFirstOrThrow()).context).toBe("{}");
    // (The answers to the campaign's own events, not a call's, stay.)
    const answers = await deliveryAnswersOf(db, calls);
    expect(answers.filter((a) => a.status_code === 200).length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.response_body !== null)).toEqual([]);
    // ... the API shows none of it (the contact's context is gone with the call's)...
    expect((await app.request("GET", contactsUrl, { key: owner.key })).body.data[0]).toMatchObject({ context: {}, phone: "+15005551002" });
    // ... and neither do the database's files, freed space and WAL included.
    expect(stringsInDataFiles(app.dataDir, MARKERS)).toEqual([]);

    // Deleting again finds nothing to remove and does not empty the WAL again (each emptying
    // holds the event loop a few milliseconds: repeated requests must not multiply them).
    // The request's own write (the call's updated_at) stays in the WAL.
    expect((await app.request("DELETE", `/v1/calls/${stored.id}`, { key: owner.key })).status).toBe(200);
    expect(statSync(`${app.dataDir}/parley.db-wal`).size).toBeGreaterThan(0);
  });
});
