import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallAction } from "../../engine/index.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// A call's tool calls (GET /v1/calls/{id}?include=tool_calls), read from the actions stored
// with the call as the media side stores them when it ends.

const ACTIONS: CallAction[] = [
  { type: "answered_question", question: "when are you open" },
  {
    type: "tool_call",
    name: "order_status",
    arguments: { order_number: "4417" },
    result: { ok: true, data: { status: "shipped", eta: "Friday" } },
  },
  {
    type: "tool_call",
    name: "book_appointment",
    arguments: { customer_name: "John Smith", date: "2026-12-01", time: "15:00", service: "cleaning" },
    result: { ok: false, error: "that time is already taken; offer one of the alternatives", data: { reason: "slot_taken", alternatives: ["16:00"] } },
  },
  { type: "tool_call", name: "order_status", arguments: { order_number: "9" }, result: { ok: false, error: "its URL answered HTTP 500" } },
  // `then` is the call's own business (it shows in the status and end reason), not the tool's answer.
  { type: "tool_call", name: "end_call", arguments: { reason: "caller_goodbye" }, result: { ok: true, data: { status: "ending" }, then: { endCall: "caller_goodbye" } } },
  { type: "end_call", reason: "caller_goodbye" },
];

const TOOL_CALLS = [
  { name: "order_status", arguments: { order_number: "4417" }, ok: true, data: { status: "shipped", eta: "Friday" }, error: null },
  {
    name: "book_appointment",
    arguments: { customer_name: "John Smith", date: "2026-12-01", time: "15:00", service: "cleaning" },
    ok: false,
    data: { reason: "slot_taken", alternatives: ["16:00"] },
    error: "that time is already taken; offer one of the alternatives",
  },
  { name: "order_status", arguments: { order_number: "9" }, ok: false, data: null, error: "its URL answered HTTP 500" },
  { name: "end_call", arguments: { reason: "caller_goodbye" }, ok: true, data: { status: "ending" }, error: null },
];

describe("GET /v1/calls/{id}?include=tool_calls", () => {
  let app: TestApp;
  let acct: TestAccount;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp();
    acct = await app.account();
    const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Ava", system_prompt: "You help.", voice_id: "flite-slt" } });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
  }, 30_000);
  afterAll(() => app?.close());

  /** An ended call with `actions` stored, as the media side leaves it. */
  const endedCall = (actions: CallAction[] | null) =>
    insertCallRow(app.parley.services.db, {
      account_id: acct.id,
      agent_id: agentId,
      status: "completed",
      duration: 30,
      answered_at: "2026-01-01T00:00:02.000Z",
      ended_at: "2026-01-01T00:00:32.000Z",
      created_at: "2026-01-01T00:00:00.000Z",
      transcript: JSON.stringify([{ role: "user", content: "where is my order 4417", timestamp: 1 }]),
      actions: actions === null ? null : JSON.stringify(actions),
    });

  it("lists the tool calls in the order run, each with ok, data and error (null when absent), and nothing else the agent did", async () => {
    const call = await endedCall(ACTIONS);
    const read = await app.request("GET", `/v1/calls/${call.id}?include=tool_calls`, { key: acct.key });
    expect(read.status).toBe(200);
    expect(read.body.tool_calls).toEqual(TOOL_CALLS);
    // Beside the other parts, and only when asked for.
    const both = await app.request("GET", `/v1/calls/${call.id}?include=transcript,tool_calls`, { key: acct.key });
    expect(both.body).toMatchObject({ transcript: [{ content: "where is my order 4417" }], tool_calls: TOOL_CALLS });
    const plain = await app.request("GET", `/v1/calls/${call.id}`, { key: acct.key });
    expect(plain.body).not.toHaveProperty("tool_calls");
  });

  it("gives [] for a call whose agent used no tool, and for one with no stored actions", async () => {
    for (const actions of [[{ type: "end_call", reason: "caller_goodbye" }] as CallAction[], null]) {
      const call = await endedCall(actions);
      const read = await app.request("GET", `/v1/calls/${call.id}?include=tool_calls`, { key: acct.key });
      expect(read.status).toBe(200);
      expect(read.body.tool_calls).toEqual([]);
    }
  });

  it("is read only with calls:read, as the transcript is: other keys get 403 forbidden for both", async () => {
    const call = await endedCall(ACTIONS);
    const reader = await app.key(acct.id, ["calls:read"]);
    expect((await app.request("GET", `/v1/calls/${call.id}?include=tool_calls`, { key: reader })).body.tool_calls).toEqual(TOOL_CALLS);
    for (const permissions of [["agents:read", "webhooks:write", "appointments:read"], ["knowledge:read", "secrets:read"]]) {
      const key = await app.key(acct.id, permissions);
      for (const include of ["transcript", "tool_calls"]) {
        const res = await app.request("GET", `/v1/calls/${call.id}?include=${include}`, { key });
        expect(res.status).toBe(403);
        expect(errorOf(res).code).toBe("forbidden");
        expect(JSON.stringify(res.body)).not.toContain("4417");
      }
    }
  });

  it("is not another account's to read", async () => {
    const call = await endedCall(ACTIONS);
    const other = await app.account();
    const res = await app.request("GET", `/v1/calls/${call.id}?include=tool_calls`, { key: other.key });
    expect(res.status).not.toBe(200);
    expect(JSON.stringify(res.body)).not.toContain("4417");
  });

  it("goes with the call's content on DELETE /v1/calls/{id}: the arguments are the caller's words", async () => {
    const call = await endedCall(ACTIONS);
    const removed = await app.request("DELETE", `/v1/calls/${call.id}`, { key: acct.key });
    expect(removed.status).toBe(200);
    const read = await app.request("GET", `/v1/calls/${call.id}?include=tool_calls`, { key: acct.key });
    expect(read.body.tool_calls).toEqual([]);
    const row = await app.parley.services.db.selectFrom("calls").select("actions").where("id", "=", call.id).executeTakeFirstOrThrow();
    expect(row.actions).toBeNull();
  });

  it("refuses an include it does not know, naming the field", async () => {
    const call = await endedCall(ACTIONS);
    const res = await app.request("GET", `/v1/calls/${call.id}?include=tool_call`, { key: acct.key });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: "invalid_request" });
  });
});
