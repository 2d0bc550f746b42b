import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Live supervision (issue 32), the API's side: which calls can be supervised, by whom, and a
// call another node runs (its say, whisper and hand-back sent to that node as call commands).
// Listening and taking over a real call: test/e2e/supervision.test.ts.

let app: TestApp;
let acct: TestAccount;
let agentId: string;

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  agentId = (await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Desk", system_prompt: "x", voice_id: "flite-slt" } })).body.id;
});
afterAll(async () => {
  await app.close();
});

const callRow = (over: Record<string, unknown> = {}) => insertCallRow(app.parley.services.db, { account_id: acct.id, agent_id: agentId, ...over });

describe("say, whisper, hand-back and listen tokens", () => {
  it("refuse an unknown call (404), another account's (403), and one not in progress (409 call_not_in_progress)", async () => {
    const ended = await callRow({ status: "completed" });
    const other = await app.account();
    for (const [path, body] of [["say", { text: "hi" }], ["whisper", { text: "hi" }], ["hand-back", {}], ["listen-token", {}]] as const) {
      expect(errorOf(await app.request("POST", `/v1/calls/call_nope/${path}`, { key: acct.key, body })).code).toBe("call_not_found");
      expect(errorOf(await app.request("POST", `/v1/calls/${ended.id}/${path}`, { key: other.key, body })).code).toBe("unauthorized");
      const res = await app.request("POST", `/v1/calls/${ended.id}/${path}`, { key: acct.key, body });
      expect(res.status).toBe(409);
      expect(errorOf(res).code).toBe("call_not_in_progress");
    }
  });

  it("validate the text and the permissions: say and whisper need calls:write, a takeover token too", async () => {
    const live = await callRow({ status: "in_progress", answered_at: new Date().toISOString() });
    for (const text of ["", "   ", "x".repeat(1001)]) expect((await app.request("POST", `/v1/calls/${live.id}/say`, { key: acct.key, body: { text } })).status).toBe(400);
    const reader = await app.key(acct.id, ["calls:read"]);
    expect((await app.request("POST", `/v1/calls/${live.id}/whisper`, { key: reader, body: { text: "hi" } })).status).toBe(403);
    const takeover = await app.request("POST", `/v1/calls/${live.id}/listen-token`, { key: reader, body: { mode: "takeover" } });
    expect(takeover.status).toBe(403);
    expect((await app.request("POST", `/v1/calls/${live.id}/listen-token`, { key: reader, body: { mode: "shout" } })).status).toBe(400);
    const listen = await app.request("POST", `/v1/calls/${live.id}/listen-token`, { key: reader, body: {} });
    expect(listen.status).toBe(201);
    expect(listen.body).toMatchObject({ call_id: live.id, mode: "listen", url: `/media/listen?call_id=${live.id}&token=${listen.body.token}` });
    // Stored hashed: the token itself is nowhere in the database.
    const rows = await app.parley.services.db.selectFrom("listen_tokens").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(listen.body.token);
    // Used once, and only for its call.
    const { callSupervision } = app.parley.services;
    expect(await callSupervision.redeem(listen.body.token, "call_other")).toBeNull();
    expect(await callSupervision.redeem(listen.body.token, live.id)).toEqual({ accountId: acct.id, mode: "listen" });
    expect(await callSupervision.redeem(listen.body.token, live.id)).toBeNull();
  });

  it("hold at most 20 unused listen tokens per account, even asked for all at once (429 with Retry-After)", async () => {
    const owner = await app.account();
    const agent = (await app.request("POST", "/v1/agents", { key: owner.key, body: { name: "Desk", system_prompt: "x", voice_id: "flite-slt" } })).body.id;
    const live = await insertCallRow(app.parley.services.db, { account_id: owner.id, agent_id: agent, status: "in_progress", answered_at: new Date().toISOString() });
    const answers = await Promise.all(Array.from({ length: 25 }, () => app.request("POST", `/v1/calls/${live.id}/listen-token`, { key: owner.key, body: {} })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(20);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => [a.status, errorOf(a).code])).toEqual(Array.from({ length: 5 }, () => [429, "rate_limit_exceeded"]));
    expect(refused[0]!.headers.get("retry-after")).toBe("60");
    // Another account is not held back by this one's tokens.
    expect((await app.request("POST", `/v1/calls/${(await callRow({ status: "in_progress", answered_at: new Date().toISOString() })).id}/listen-token`, { key: acct.key, body: {} })).status).toBe(201);
    // A token used is no longer open: one more fits.
    const used = answers.find((a) => a.status === 201)!.body.token;
    expect(await app.parley.services.callSupervision.redeem(used, live.id)).toEqual({ accountId: owner.id, mode: "listen" });
    expect((await app.request("POST", `/v1/calls/${live.id}/listen-token`, { key: owner.key, body: {} })).status).toBe(201);
  });

  it("send what a call another node runs is asked to that node, in order, with the text", async () => {
    const { db } = app.parley.services;
    await db.insertInto("nodes").values({ id: "node_elsewhere", started_at: new Date().toISOString(), heartbeat_at: Date.now(), stopped_at: null }).execute();
    const live = await callRow({ status: "in_progress", answered_at: new Date().toISOString(), node_id: "node_elsewhere" });
    expect((await app.request("POST", `/v1/calls/${live.id}/say`, { key: acct.key, body: { text: "  One moment please.  " } })).body).toEqual({ call_id: live.id, action: "say", status: "accepted" });
    expect((await app.request("POST", `/v1/calls/${live.id}/whisper`, { key: acct.key, body: { text: "Be brief." } })).status).toBe(202);
    expect((await app.request("POST", `/v1/calls/${live.id}/hand-back`, { key: acct.key, body: {} })).status).toBe(202);
    const commands = await db.selectFrom("call_commands").select(["node_id", "command", "payload"]).where("call_id", "=", live.id).orderBy("created_at").orderBy("id").execute();
    expect(commands).toEqual([
      { node_id: "node_elsewhere", command: "say", payload: "One moment please." },
      { node_id: "node_elsewhere", command: "whisper", payload: "Be brief." },
      { node_id: "node_elsewhere", command: "hand_back", payload: null },
    ]);
    // A call in progress that no live node runs (its node gone) is not supervised.
    const orphan = await callRow({ status: "in_progress", answered_at: new Date().toISOString(), node_id: "node_gone" });
    expect(errorOf(await app.request("POST", `/v1/calls/${orphan.id}/say`, { key: acct.key, body: { text: "hi" } })).code).toBe("call_not_in_progress");
  });
});
