import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_OPEN_WEB_CALL_TOKENS } from "../../src/services/web-call-tokens.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { upgrade, type UpgradeOutcome } from "../helpers/ws-upgrade.js";

/**
 * Browser calls: POST /v1/calls/web gives a single-use token that opens /media/ws without an
 * Authorization header. Over loopback against the real service and engine.
 */

vi.setConfig({ testTimeout: 30_000 });

let app: TestApp;
let acct: TestAccount;
let agentId: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
  acct = await app.account();
  agentId = await newAgent(acct);
});
afterAll(async () => {
  await app.close();
});

async function newAgent(account: TestAccount): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: account.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello." } });
  expect(res.status).toBe(201);
  return res.body.id;
}

const issue = (body: Record<string, unknown>, key = acct.key) => app.request("POST", "/v1/calls/web", { key, body });

async function token(body: Record<string, unknown> = {}): Promise<{ call_id: string; token: string; websocket_url: string; expires_at: string }> {
  const res = await issue({ agent_id: agentId, ...body });
  expect(res.status).toBe(201);
  return res.body;
}

/** Connects as a browser does: the URL given (on the test service's port), the audio format appended, no Authorization header. */
const connect = (websocketUrl: string, query = "&format=pcm16&sample_rate=16000") => upgrade(`${websocketUrl.replace(/^ws:\/\/[^/]+/, wsOrigin())}${query}`);
const wsOrigin = () => app.baseUrl.replace(/^http/, "ws");

async function hangUp(outcome: UpgradeOutcome): Promise<void> {
  const closed = new Promise((resolve) => outcome.socket!.once("close", resolve));
  outcome.socket!.send(JSON.stringify({ type: "hangup" }));
  await closed;
  for (let i = 0; i < 100 && app.parley.media!.gateway.slotsHeld > 0; i++) await new Promise((r) => setTimeout(r, 50));
}

describe("POST /v1/calls/web", () => {
  it("gives a token for /media/ws, bound to a call id, that expires in five minutes; the token is stored hashed", async () => {
    const before = Date.now();
    const res = await issue({ agent_id: agentId, context: { customer_name: "Ada" }, record: false, max_duration: 120 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      call_id: expect.stringMatching(/^call_[0-9A-Za-z]+$/),
      token: expect.stringMatching(/^wct_[0-9A-Za-z]{43}$/),
      // From PARLEY_BASE_URL, which the test service sets without its port (chosen when it binds).
      websocket_url: `${app.config.baseUrl.replace(/^http/, "ws")}/media/ws?token=${res.body.token}`,
      expires_at: expect.any(String),
    });
    const ttl = Date.parse(res.body.expires_at) - before;
    expect(ttl).toBeGreaterThan(299_000);
    expect(ttl).toBeLessThanOrEqual(301_000);
    const rows = await app.parley.services.db.selectFrom("web_call_tokens").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(res.body.token);
    // No call exists until the browser connects.
    expect((await app.request("GET", `/v1/calls/${res.body.call_id}`, { key: acct.key })).status).toBe(404);
  });

  it("refuses bad bodies naming the field, unknown and inactive agents, and keys that cannot place calls", async () => {
    const missing = await issue({});
    expect(missing.status).toBe(400);
    expect(errorOf(missing)).toMatchObject({ code: "invalid_request", message: expect.stringContaining("agent_id") });
    const long = await issue({ agent_id: agentId, max_duration: 4000 });
    expect(long.status).toBe(400);
    expect(errorOf(long).message).toContain("max_duration");
    const extra = await issue({ agent_id: agentId, phone_number: "+14155550100" });
    expect(extra.status).toBe(400);
    expect((await issue({ agent_id: "agent_nope" })).status).toBe(404);

    // Another account's agent is not theirs to call.
    const other = await app.account();
    expect((await issue({ agent_id: agentId }, other.key)).status).toBe(403);

    const idle = await newAgent(acct);
    expect((await app.request("PATCH", `/v1/agents/${idle}`, { key: acct.key, body: { status: "inactive" } })).status).toBe(200);
    const inactive = await issue({ agent_id: idle });
    expect(inactive.status).toBe(409);
    expect(errorOf(inactive).code).toBe("agent_inactive");

    const reader = await app.key(acct.id, ["calls:read"]);
    expect((await issue({ agent_id: agentId }, reader)).status).toBe(403);
  });

  it("holds at most MAX_OPEN_WEB_CALL_TOKENS unused tokens per account: the next is 429 with Retry-After", async () => {
    const flooder = await app.account();
    const agent = await newAgent(flooder);
    const rows = Array.from({ length: MAX_OPEN_WEB_CALL_TOKENS - 1 }, (_, i) => ({
      token_hash: `h${i}`,
      account_id: flooder.id,
      agent_id: agent,
      call_id: `call_flood${i}`,
      context: "{}",
      record: 1,
      max_duration: 60,
      expires_at: new Date(Date.now() + 60_000).toISOString(),
      used_at: null,
      created_at: new Date().toISOString(),
    }));
    await app.parley.services.db.insertInto("web_call_tokens").values(rows).execute();
    expect((await issue({ agent_id: agent }, flooder.key)).status).toBe(201);
    const refused = await issue({ agent_id: agent }, flooder.key);
    expect(refused.status).toBe(429);
    expect(errorOf(refused).code).toBe("rate_limit_exceeded");
    expect(refused.headers.get("retry-after")).toBe("300");
    // Another account is not held back by it.
    expect((await issue({ agent_id: agentId })).status).toBe(201);
  });
});

describe("/media/ws with a web call token", () => {
  it("opens the call under the promised id without an Authorization header: the agent greets, the call is stored as web", async () => {
    const web = await token({ context: { customer_name: "Ada" }, record: false });
    const call = await connect(web.websocket_url);
    expect(call.status).toBe(101);
    try {
      for (let i = 0; i < 100 && !call.messages.some((m) => m.type === "transcript" && m.role === "agent"); i++) await new Promise((r) => setTimeout(r, 50));
      expect(call.messages[0]).toMatchObject({ type: "connected", call_id: web.call_id });
      expect(call.messages.find((m) => m.type === "transcript")).toMatchObject({ role: "agent", content: "Hello." });
    } finally {
      await hangUp(call);
    }
    const stored = await app.request("GET", `/v1/calls/${web.call_id}`, { key: acct.key });
    expect(stored.body).toMatchObject({ id: web.call_id, direction: "web", agent_id: agentId, record: false, status: "completed" });
  });

  it("refuses a used token (401 call_token_used), and two sockets racing with one token get one call", async () => {
    const web = await token();
    const [a, b] = await Promise.all([connect(web.websocket_url), connect(web.websocket_url)]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([101, 401]);
    const [open, refused] = a.status === 101 ? [a, b] : [b, a];
    expect(refused.body.error.code).toBe("call_token_used");
    await hangUp(open);
    const again = await connect(web.websocket_url);
    expect(again.status).toBe(401);
    expect(again.body.error).toMatchObject({ code: "call_token_used", message: expect.stringContaining("POST /v1/calls/web") });
  });

  it("refuses an expired token with 401 call_token_expired", async () => {
    const web = await token();
    await app.parley.services.db.updateTable("web_call_tokens").set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where("call_id", "=", web.call_id).execute();
    const refused = await connect(web.websocket_url);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("call_token_expired");
  });

  it("refuses a token for another agent with 403, and the token still opens its own agent's call", async () => {
    const web = await token();
    const otherAgent = await newAgent(acct);
    const refused = await connect(web.websocket_url, `&agent_id=${otherAgent}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("another agent") });
    const own = await connect(web.websocket_url, `&agent_id=${agentId}`);
    expect(own.status).toBe(101);
    await hangUp(own);
  });

  it("refuses forged tokens with 401 invalid_call_token, and a bad format before using the token up", async () => {
    const base = `${wsOrigin()}/media/ws?token=`;
    for (const forged of ["wct_" + "A".repeat(43), "mt_notawebtoken", ""]) {
      const refused = await upgrade(`${base}${encodeURIComponent(forged)}`);
      expect(refused.status, forged).toBe(401);
      expect(refused.body.error.code, forged).toBe("invalid_call_token");
    }
    const web = await token();
    expect((await connect(web.websocket_url, "&format=mp3")).status).toBe(400);
    const call = await connect(web.websocket_url);
    expect(call.status).toBe(101);
    await hangUp(call);
  });
});
