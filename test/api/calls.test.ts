import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsRepository } from "../../src/db/repositories/events.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;

const agentBody = { name: "Caller", system_prompt: "You confirm appointments.", voice_id: "flite-slt" };
const DESTINATION = "+14155550123";

// Numbers are unique across accounts while held, so every account takes fresh ones.
let serial = 2000;
const freshNumber = () => `+1650555${String(serial++).padStart(4, "0")}`;

interface Caller extends TestAccount {
  agentId: string;
  /** The account's numbers, oldest first. */
  numbers: string[];
}

/** An account with an active agent and `numbers` phone numbers, registered and approved. */
async function caller(options: { numbers?: number; credits?: number } = {}): Promise<Caller> {
  const account = await app.account({ credits: options.credits ?? 100 });
  const agent = await app.request("POST", "/v1/agents", { key: account.key, body: agentBody });
  expect(agent.status).toBe(201);
  const numbers: string[] = [];
  for (let i = 0; i < (options.numbers ?? 1); i++) {
    const res = await app.request("POST", "/v1/phone-numbers", { key: account.key, body: { phone_number: freshNumber(), country: "US" } });
    expect(res.status).toBe(201);
    await app.approveNumber(res.body.id);
    numbers.push(res.body.phone_number);
  }
  return { ...account, agentId: agent.body.id, numbers };
}

const place = (who: Caller, body: Record<string, unknown> = {}) =>
  app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: DESTINATION, agent_id: who.agentId, ...body } });

function expectError(res: ApiResponse, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  const error = errorOf(res);
  expect(error.code).toBe(code);
  if (field !== undefined) {
    expect(error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(error.message).toContain(field);
  }
  return error;
}

let main: Caller;

beforeAll(async () => {
  app = await startTestApp();
  main = await caller({ numbers: 2 });
});
afterAll(async () => {
  await app.close();
});

describe("POST /v1/calls", () => {
  it("creates a queued outbound call with 200 and the reference's defaults", async () => {
    const res = await place(main);
    expect(res.status).toBe(200);
    expect(res.body.id).toMatch(/^call_[0-9A-Za-z]{20}$/);
    expect(res.body).toEqual({
      id: res.body.id,
      status: "queued",
      direction: "outbound",
      phone_number: DESTINATION,
      from_number: main.numbers[0],
      agent_id: main.agentId,
      metadata: {},
      record: true,
      created_at: res.body.created_at,
    });
    const read = await app.request("GET", `/v1/calls/${res.body.id}`, { key: main.key });
    expect(read.body).toEqual({
      ...res.body,
      max_duration: 3600,
      duration: null,
      answered_at: null,
      ended_at: null,
    });
    const row = await app.parley.services.db.selectFrom("calls").selectAll().where("id", "=", res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ account_id: main.id, context: "{}", webhook_url: null, campaign_id: null });
  });

  it("refuses destinations outside the calling codes of the account's numbers (toll-fraud guard)", async () => {
    const res = await place(main, { phone_number: "+442071838750" });
    expectError(res, 400, "invalid_phone_number", "phone_number");
    expect(errorOf(res).message).toMatch(/calls to \+44 are not allowed for this account \(allowed: \+1\)/);
    const premium = await place(main, { phone_number: "+8819876543210" });
    expectError(premium, 400, "invalid_phone_number", "phone_number");
  });

  it("stores every given field, with the guide's `to` and `context`", async () => {
    const res = await place(main, {
      phone_number: undefined,
      to: "+14155550166",
      from_number: main.numbers[1],
      metadata: { crm_id: 42 },
      context: { customer_name: "Ada", purpose: "confirm Tuesday" },
      webhook_url: "https://hooks.example.com/parley",
      record: false,
      max_duration: 60,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ phone_number: "+14155550166", from_number: main.numbers[1], metadata: { crm_id: 42 }, record: false });
    const read = await app.request("GET", `/v1/calls/${res.body.id}`, { key: main.key });
    expect(read.body.max_duration).toBe(60);
    const row = await app.parley.services.db.selectFrom("calls").selectAll().where("id", "=", res.body.id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.context)).toEqual({ customer_name: "Ada", purpose: "confirm Tuesday" });
    expect(row.webhook_url).toBe("https://hooks.example.com/parley");
    const loopback = await place(main, { webhook_url: "http://127.0.0.1:9999/hook" });
    expect(loopback.status).toBe(200);
  });

  it.each([
    [{ phone_number: "4155550123" }, "invalid_phone_number", "phone_number"],
    [{ phone_number: "+0155550123" }, "invalid_phone_number", "phone_number"],
    [{ phone_number: undefined }, "invalid_phone_number", "phone_number"],
    [{ phone_number: undefined, agent_id: undefined, record: true }, "invalid_phone_number", "phone_number"],
    [{ to: "+14155550124" }, "invalid_request", "to"],
    [{ phone_number: undefined, to: "555" }, "invalid_request", "to"],
    [{ agent_id: undefined }, "invalid_request", "agent_id"],
    [{ agent_id: 7 }, "invalid_request", "agent_id"],
    [{ from_number: "0800 123" }, "invalid_from_number", "from_number"],
    [{ metadata: [1] }, "invalid_request", "metadata"],
    [{ metadata: "x" }, "invalid_request", "metadata"],
    [{ context: "call Ada" }, "invalid_request", "context"],
    [{ record: "yes" }, "invalid_request", "record"],
    [{ max_duration: 0 }, "invalid_request", "max_duration"],
    [{ max_duration: 3601 }, "invalid_request", "max_duration"],
    [{ max_duration: 1.5 }, "invalid_request", "max_duration"],
    [{ webhook_url: "http://hooks.example.com/parley" }, "invalid_url", "webhook_url"],
    [{ webhook_url: "ftp://hooks.example.com/parley" }, "invalid_url", "webhook_url"],
    [{ webhook_url: "not a url" }, "invalid_url", "webhook_url"],
    [{ webhook_url: 5 }, "invalid_url", "webhook_url"],
    [{ callback: "https://x" }, "invalid_request", "callback"],
  ])("refuses %j with %s naming %s", async (body, code, field) => {
    expectError(await place(main, body), 400, code, field);
  });

  it("refuses an agent that is unknown, deleted or another account's with 404 agent_not_found", async () => {
    const other = await caller({ numbers: 0 });
    const doomed = await app.request("POST", "/v1/agents", { key: main.key, body: agentBody });
    expect((await app.request("DELETE", `/v1/agents/${doomed.body.id}`, { key: main.key })).status).toBe(200);
    for (const agentId of ["agent_doesnotexist", other.agentId, doomed.body.id]) {
      expectError(await place(main, { agent_id: agentId }), 404, "agent_not_found");
    }
  });

  it("refuses an inactive agent with 409 agent_inactive, before looking at numbers and credits", async () => {
    const poor = await caller({ numbers: 0, credits: 0 });
    await app.request("PATCH", `/v1/agents/${poor.agentId}`, { key: poor.key, body: { status: "inactive" } });
    expectError(await place(poor), 409, "agent_inactive");
  });

  it("takes the from number from the account's active numbers, the oldest by default", async () => {
    const who = await caller({ numbers: 2 });
    const other = await caller({ numbers: 1 });
    const foreign = await place(who, { from_number: other.numbers[0] });
    expectError(foreign, 400, "invalid_from_number", "from_number");
    const unknown = await place(who, { from_number: "+19995550100" });
    expectError(unknown, 400, "invalid_from_number", "from_number");

    const list = await app.request("GET", "/v1/phone-numbers?order=asc", { key: who.key });
    await app.request("DELETE", `/v1/phone-numbers/${list.body.data[0].id}`, { key: who.key });
    expectError(await place(who, { from_number: who.numbers[0] }), 400, "invalid_from_number", "from_number");
    expect((await place(who)).body.from_number).toBe(who.numbers[1]);
  });

  it("without any active number refuses with invalid_from_number naming the admin command", async () => {
    const bare = await caller({ numbers: 0, credits: 0 });
    const error = expectError(await place(bare), 400, "invalid_from_number", "from_number");
    expect(error.message).toContain("parley admin number add");
  });

  it("refuses with 402 insufficient_credits below one minute's credit", async () => {
    const poor = await caller({ credits: 0 });
    expectError(await place(poor), 402, "insufficient_credits");
    await app.parley.services.accounts.addCredits(poor.id, 1);
    expect((await place(poor)).status).toBe(200);
  });

  it("refuses with 429 rate_limit_exceeded past the queued-call limit, credits checked first", async () => {
    const busy = await caller();
    await app.parley.services.accounts.setLimits(busy.id, { queuedCalls: 2 });
    expect((await place(busy)).status).toBe(200);
    expect((await place(busy)).status).toBe(200);
    const third = await place(busy);
    const error = expectError(third, 429, "rate_limit_exceeded");
    expect(error.message).toContain("queued");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);

    // Ended calls no longer count.
    const first = (await app.request("GET", "/v1/calls?limit=1", { key: busy.key })).body.data[0];
    expect((await app.request("POST", `/v1/calls/${first.id}/end`, { key: busy.key })).status).toBe(200);
    expect((await place(busy)).status).toBe(200);

    await app.parley.services.accounts.addCredits(busy.id, -100);
    expectError(await place(busy), 402, "insufficient_credits");
  });

  it("creates one call for a repeated Idempotency-Key", async () => {
    const who = await caller();
    const headers = { "idempotency-key": "call-once" };
    const body = { phone_number: DESTINATION, agent_id: who.agentId };
    const first = await app.request("POST", "/v1/calls", { key: who.key, body, headers });
    const second = await app.request("POST", "/v1/calls", { key: who.key, body, headers });
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect((await app.request("GET", "/v1/calls", { key: who.key })).body.total).toBe(1);
  });

  it("needs calls:write", async () => {
    const reader = await app.key(main.id, ["calls:read"]);
    const res = await app.request("POST", "/v1/calls", { key: reader, body: { phone_number: DESTINATION, agent_id: main.agentId } });
    expectError(res, 403, "forbidden");
    expect((await app.request("GET", "/v1/calls", { key: reader })).status).toBe(200);
    expectError(await app.request("GET", "/v1/calls", { key: await app.key(main.id, ["numbers:read"]) }), 403, "forbidden");
  });
});

describe("POST /v1/calls without loopback http allowed", () => {
  it("refuses http:// webhook URLs, and any into the service's own networks", async () => {
    // Names resolve to a public address here (nothing connects to it: call creation does not probe).
    const strict = await startTestApp({}, { PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "0" }, undefined, { hostResolver: async () => [{ address: "93.184.216.34", family: 4 }] });
    try {
      const account = await strict.account();
      const agent = await strict.request("POST", "/v1/agents", { key: account.key, body: agentBody });
      const number = await strict.request("POST", "/v1/phone-numbers", { key: account.key, body: { phone_number: "+16505559999", country: "US" } });
      await strict.approveNumber(number.body.id);
      const body = { phone_number: DESTINATION, agent_id: agent.body.id, webhook_url: "http://127.0.0.1:9999/hook" };
      expectError(await strict.request("POST", "/v1/calls", { key: account.key, body }), 400, "invalid_url", "webhook_url");
      for (const url of ["https://127.0.0.1/hook", "https://10.0.0.5/hook", "https://169.254.169.254/latest/meta-data", "https://[fd00::1]/hook", "https://[::ffff:192.168.0.1]/hook"]) {
        const refused = await strict.request("POST", "/v1/calls", { key: account.key, body: { ...body, webhook_url: url } });
        expectError(refused, 400, "invalid_url", "webhook_url");
        expect(refused.body.error.message, url).toMatch(/own network: .*(loopback|private|link-local)/);
      }
      const https = await strict.request("POST", "/v1/calls", { key: account.key, body: { ...body, webhook_url: "https://hooks.example.com/hook" } });
      expect(https.status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe("GET /v1/calls", () => {
  let lister: Caller;
  let secondAgent: string;
  const rows: Array<{ id: string; status: string; direction: string; agent_id: string; phone_number: string | null; created_at: string }> = [];

  beforeAll(async () => {
    lister = await caller();
    secondAgent = (await app.request("POST", "/v1/agents", { key: lister.key, body: agentBody })).body.id;
    const db = app.parley.services.db;
    const specs = [
      { status: "completed", direction: "outbound", agent_id: lister.agentId, phone_number: "+14155550001", duration: 65 },
      { status: "transferred", direction: "inbound", agent_id: lister.agentId, phone_number: lister.numbers[0]!, duration: 30 },
      { status: "failed", direction: "outbound", agent_id: secondAgent, phone_number: "+14155550001", duration: null },
      { status: "no_answer", direction: "outbound", agent_id: lister.agentId, phone_number: "+14155550002", duration: null },
      { status: "busy", direction: "outbound", agent_id: secondAgent, phone_number: "+14155550002", duration: null },
      { status: "in_progress", direction: "web", agent_id: lister.agentId, phone_number: "+14155550003", duration: null },
      { status: "ringing", direction: "outbound", agent_id: secondAgent, phone_number: "+14155550001", duration: null },
    ];
    for (const [i, spec] of specs.entries()) {
      const row = await insertCallRow(db, { account_id: lister.id, ...spec, created_at: `2026-01-0${i + 1}T12:00:00.000Z` });
      rows.push(row);
    }
    const placed = await place(lister);
    expect(placed.status).toBe(200);
    rows.push(placed.body);
    // Another account's calls never show.
    const other = await caller();
    await place(other);
  });

  const ids = (res: ApiResponse) => res.body.data.map((c: { id: string }) => c.id);
  const list = (qs: string) => app.request("GET", `/v1/calls${qs}`, { key: lister.key });

  it("lists call list items, newest first", async () => {
    const res = await list("");
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(8);
    expect(res.body.has_more).toBe(false);
    expect(res.body.next_cursor).toBeNull();
    expect(ids(res)).toEqual(rows.map((r) => r.id).reverse());
    expect(Object.keys(res.body.data[0]).sort()).toEqual(
      ["agent_id", "created_at", "direction", "duration", "ended_at", "from_number", "id", "metadata", "phone_number", "status"],
    );
    expect(res.body.data.find((c: { id: string }) => c.id === rows[0]!.id)).toMatchObject({ status: "completed", duration: 65, direction: "outbound" });
  });

  it("walks every page to the end with the cursor, in both orders", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: ApiResponse = await list(`?limit=3&order=${order}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""));
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(8);
        seen.push(...ids(res));
        cursor = res.body.has_more ? res.body.next_cursor : null;
        if (!res.body.has_more) expect(res.body.next_cursor).toBeNull();
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      const all = rows.map((r) => r.id);
      expect(seen).toEqual(order === "asc" ? all : all.reverse());
    }
  });

  it("walks a filtered list with its own cursor", async () => {
    const first = await list(`?agent_id=${secondAgent}&limit=2`);
    expect(first.body.total).toBe(3);
    expect(first.body.has_more).toBe(true);
    const rest = await list(`?agent_id=${secondAgent}&limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect([...ids(first), ...ids(rest)]).toEqual([rows[6]!.id, rows[4]!.id, rows[2]!.id]);
    expect(rest.body.has_more).toBe(false);
    expectError(await list(`?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`), 400, "invalid_cursor", "cursor");
  });

  it.each([
    ["status=transferred", [1]],
    ["status=queued", [7]],
    ["status=busy", [4]],
    ["direction=inbound", [1]],
    ["direction=web", [5]],
    ["direction=outbound&status=failed", [2]],
    ["phone_number=%2B14155550001", [6, 2, 0]],
    ["phone_number=%2B14155550001&agent_id=AGENT2", [6, 2]],
    ["agent_id=AGENT2", [6, 4, 2]],
    ["agent_id=agent_other", []],
    ["from_date=2026-01-03T12:00:00Z", [7, 6, 5, 4, 3, 2]],
    ["from_date=2026-01-03T12:00:00.001Z", [7, 6, 5, 4, 3]],
    ["to_date=2026-01-03T12:00:00Z", [1, 0]],
    ["from_date=2026-01-02&to_date=2026-01-04", [2, 1]],
    ["from_date=2026-01-02T13:00:00%2B01:00&to_date=2026-01-04T12:00:00Z", [2, 1]],
    ["from_date=2026-01-05&to_date=2026-01-05", []],
  ])("filters %s, in one page and one call a page each way", async (qs, expected) => {
    const query = qs.replace("AGENT2", secondAgent);
    const res = await list(`?${query}`);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(expected.map((i) => rows[i]!.id));
    expect(res.body.total).toBe(expected.length);
    // Past a cursor the repository leaves out the date bound the cursor already meets: the
    // walk must still give exactly the filtered calls, in both orders.
    for (const order of ["desc", "asc"]) {
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await list(`?${query}&limit=1&order=${order}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(page.status).toBe(200);
        expect(page.body.total).toBe(expected.length);
        walked.push(...ids(page));
        cursor = page.body.next_cursor;
      } while (cursor !== null);
      const inOrder = expected.map((i) => rows[i]!.id);
      expect(walked).toEqual(order === "desc" ? inOrder : [...inOrder].reverse());
    }
  });

  it.each([
    ["status=answered", "invalid_status", "status"],
    ["direction=sideways", "invalid_request", "direction"],
    ["phone_number=4155550001", "invalid_phone_number", "phone_number"],
    ["from_date=yesterday", "invalid_date_format", "from_date"],
    ["to_date=2026-02-31", "invalid_date_format", "to_date"],
    ["to_date=2026-01-01T10:00:00", "invalid_date_format", "to_date"],
    ["from_date=2026-01-05&to_date=2026-01-04", "invalid_date_format", "from_date"],
    ["limit=0", "invalid_request", "limit"],
    ["limit=101", "invalid_request", "limit"],
    ["order=newest", "invalid_request", "order"],
    ["cursor=abc.def", "invalid_cursor", "cursor"],
    ["colour=red", "invalid_request", "colour"],
  ])("refuses %s with %s naming %s", async (qs, code, field) => {
    expectError(await list(`?${qs}`), 400, code, field);
  });
});

describe("GET /v1/calls/{id}", () => {
  it("adds transcript, recording and analysis only when included", async () => {
    const placed = await place(main);
    const plain = await app.request("GET", `/v1/calls/${placed.body.id}`, { key: main.key });
    expect(plain.body).not.toHaveProperty("transcript");
    expect(plain.body).not.toHaveProperty("recording_url");
    expect(plain.body).not.toHaveProperty("analysis");
    const all = await app.request("GET", `/v1/calls/${placed.body.id}?include=transcript,recording,analysis`, { key: main.key });
    expect(all.body).toEqual({ ...plain.body, transcript: [], recording_url: null, analysis: null });

    const transcript = [
      { role: "agent", content: "Hello, this is the clinic.", timestamp: 0.4 },
      { role: "user", content: "Hi, I need to move my appointment.", timestamp: 2.1 },
    ];
    const analysis = { outcome: "callback_requested", sentiment: { overall: "neutral", score: 0.5 } };
    const ended = await insertCallRow(app.parley.services.db, {
      account_id: main.id,
      agent_id: main.agentId,
      status: "completed",
      duration: 42,
      answered_at: "2026-01-01T00:00:05.000Z",
      ended_at: "2026-01-01T00:00:47.000Z",
      created_at: "2026-01-01T00:00:00.000Z",
      transcript: JSON.stringify(transcript),
      analysis: JSON.stringify(analysis),
    });
    const read = await app.request("GET", `/v1/calls/${ended.id}?include=transcript,analysis`, { key: main.key });
    expect(read.body).toMatchObject({ status: "completed", duration: 42, ended_at: ended.ended_at, answered_at: ended.answered_at, transcript, analysis });
    expect(read.body).not.toHaveProperty("recording_url");

    expectError(await app.request("GET", `/v1/calls/${ended.id}?include=summary`, { key: main.key }), 400, "invalid_request", "include");
  });

  it("answers 404 call_not_found for unknown ids and 403 unauthorized for another account's", async () => {
    const placed = await place(main);
    const other = await caller({ numbers: 0 });
    for (const [method, path] of [
      ["GET", ""],
      ["POST", "/end"],
    ] as const) {
      expectError(await app.request(method, `/v1/calls/call_doesnotexist${path}`, { key: main.key }), 404, "call_not_found");
      expectError(await app.request(method, `/v1/calls/${placed.body.id}${path}`, { key: other.key }), 403, "unauthorized");
    }
    expect((await app.request("GET", `/v1/calls/${placed.body.id}`, { key: main.key })).body.status).toBe("queued");
  });
});

describe("POST /v1/calls/{id}/end", () => {
  it("ends a queued call as failed, then refuses a second end with 409 call_already_ended", async () => {
    const placed = await place(main);
    const res = await app.request("POST", `/v1/calls/${placed.body.id}/end`, { key: main.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: placed.body.id, status: "failed", duration: null, answered_at: null });
    expect(res.body.ended_at >= placed.body.created_at).toBe(true);
    expect((await app.request("GET", `/v1/calls/${placed.body.id}`, { key: main.key })).body).toEqual(res.body);
    expectError(await app.request("POST", `/v1/calls/${placed.body.id}/end`, { key: main.key }), 409, "call_already_ended");
    const emitted = await new EventsRepository(app.parley.services.db).forCall(placed.body.id);
    expect(emitted.map((e) => [e.name, e.data.status])).toEqual([["call.failed", "failed"]]);
  });

  it("settles ringing calls as no_answer and live calls as completed with their duration", async () => {
    const db = app.parley.services.db;
    const base = { account_id: main.id, agent_id: main.agentId, ended_at: null };
    const ringing = await insertCallRow(db, { ...base, status: "ringing" });
    const answeredAt = new Date(Date.now() - 95_000).toISOString();
    const live = await insertCallRow(db, { ...base, status: "in_progress", answered_at: answeredAt });
    const end = (id: string) => app.request("POST", `/v1/calls/${id}/end`, { key: main.key });

    expect((await end(ringing.id)).body).toMatchObject({ status: "no_answer", duration: null });
    const completed = await end(live.id);
    expect(completed.body.status).toBe("completed");
    expect(completed.body.answered_at).toBe(answeredAt);
    expect(completed.body.duration).toBeGreaterThanOrEqual(95);
    expect(completed.body.duration).toBeLessThan(3600);
    expect(Number.isInteger(completed.body.duration)).toBe(true);
    // A connected call is billed by the started minute, once, however it ends.
    const row = await db.selectFrom("calls").select("billed_credits").where("id", "=", live.id).executeTakeFirstOrThrow();
    expect(row.billed_credits).toBe(Math.ceil(completed.body.duration / 60));
    const charges = await db.selectFrom("ledger").select("amount").where("call_id", "=", live.id).execute();
    expect(charges.map((c) => c.amount)).toEqual([-row.billed_credits!]);
    const events = new EventsRepository(db);
    expect((await events.forCall(ringing.id)).map((e) => [e.name, e.data.status])).toEqual([["call.failed", "no_answer"]]);
    expect((await events.forCall(live.id)).map((e) => e.name)).toEqual(["call.completed"]);
  });

  it("refuses every ended status", async () => {
    for (const status of ["completed", "transferred", "failed", "no_answer", "busy"]) {
      const row = await insertCallRow(app.parley.services.db, { account_id: main.id, agent_id: main.agentId, status });
      const error = expectError(await app.request("POST", `/v1/calls/${row.id}/end`, { key: main.key }), 409, "call_already_ended");
      expect(error.message).toContain(status);
    }
  });

  it("needs calls:write and takes no body", async () => {
    const placed = await place(main);
    expectError(await app.request("POST", `/v1/calls/${placed.body.id}/end`, { key: await app.key(main.id, ["calls:read"]) }), 403, "forbidden");
    const error = expectError(await app.request("POST", `/v1/calls/${placed.body.id}/end`, { key: main.key, body: { reason: "x" } }), 400, "invalid_request", "(body)");
    expect(error.message).toBe("(body): this operation takes no request body");
  });

  it("is documented with call_already_ended as 409", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    expect(doc.paths["/v1/calls/{call_id}/end"].post.responses["409"].description).toContain("call_already_ended");
    expect(doc.paths["/v1/calls"].post.responses["200"]).toBeDefined();
    expect(Object.keys(doc.paths["/v1/calls/{call_id}"])).toEqual(["get", "delete"]);
    expect(doc.paths["/v1/calls/{call_id}"].delete.responses["409"].description).toContain("call_not_ended");
  });
});
