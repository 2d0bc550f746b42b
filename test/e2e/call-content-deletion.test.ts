import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { upgrade, type UpgradeOutcome } from "../helpers/ws-upgrade.js";

/**
 * DELETE /v1/calls/{id}: a privacy request removes what was said on an ended call (recording,
 * transcript, analysis, and the same content in its stored events); the billing record stays.
 * A real call through the engine over /media/ws makes the content first.
 */

vi.setConfig({ testTimeout: 30_000 });

let app: TestApp;
let acct: TestAccount;
let agentId: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
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
  for (let i = 0; i < 200; i++) {
    const row = await app.parley.services.db.selectFrom("calls").select(["status", "analysis_pending"]).where("id", "=", callId).executeTakeFirstOrThrow();
    if (row.status === "completed" && !row.analysis_pending) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the call's end was not stored");
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
