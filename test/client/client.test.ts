import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { webhookSignature } from "../../src/services/webhook-signature.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import {
  createParleyClient,
  ParleyApiError,
  verifyWebhookEvent,
  verifyWebhookSignature,
  WebhookSignatureError,
  type Agent,
  type AgentListItem,
  type CallListItem,
  type CreateAgentBody,
  type ParleyClientOptions,
  type WebhookSignatureFailure,
} from "../../clients/typescript/src/index.js";

// The typed client against the real service: in-process on a loopback port, real SQLite,
// real HTTP. Retries are checked against a small scripted server, also on loopback.

let app: TestApp;

const agentBody: CreateAgentBody = { name: "Receptionist", system_prompt: "You answer calls for a dental clinic.", voice_id: "flite-slt" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Sent {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
}

/** A client whose every attempt is logged (method, path, query, headers) before it goes out. */
function loggedClient(key: string, options: Partial<ParleyClientOptions> = {}) {
  const sent: Sent[] = [];
  const client = createParleyClient({
    baseUrl: app.baseUrl,
    apiKey: key,
    fetch: (request) => {
      const url = new URL(request.url);
      sent.push({ method: request.method, path: url.pathname, query: url.searchParams, headers: new Headers(request.headers) });
      return fetch(request);
    },
    ...options,
  });
  return { client, sent };
}

/** Runs `action`, which must throw a ParleyApiError, and returns it. */
async function apiError(action: () => Promise<unknown>): Promise<ParleyApiError> {
  try {
    await action();
  } catch (err) {
    if (err instanceof ParleyApiError) return err;
    throw err;
  }
  throw new Error("expected a ParleyApiError, got a success");
}

function signatureFailure(action: () => unknown): WebhookSignatureFailure {
  try {
    action();
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err.reason;
    throw err;
  }
  throw new Error("expected a WebhookSignatureError, got a verified signature");
}

let serial = 3000;
const freshNumber = () => `+1650556${String(serial++).padStart(4, "0")}`;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe("resource helpers against the real service", () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await app.account();
  });

  it("creates, reads, updates, lists and deletes an agent, typed by the document", async () => {
    const { client, sent } = loggedClient(acct.key);
    const agent = await client.agents.create(agentBody);
    expectTypeOf(agent).toEqualTypeOf<Agent>();
    expect(agent.id).toMatch(/^agent_/);
    expect(agent).toMatchObject({ ...agentBody, status: "active", language: "en-US", model: "llm-large" });

    expect(await client.agents.get(agent.id)).toMatchObject({ id: agent.id, name: "Receptionist" });
    const withStats = await client.agents.get(agent.id, { include: "stats" });
    expect(withStats.stats).toMatchObject({ total_calls: 0 });

    const updated = await client.agents.update(agent.id, { name: "Front desk", temperature: 0.2 });
    expect(updated).toMatchObject({ id: agent.id, name: "Front desk", temperature: 0.2 });

    const listed: AgentListItem[] = await client.agents.list().toArray();
    expect(listed.map((a) => a.id)).toContain(agent.id);

    expect(await client.agents.delete(agent.id)).toEqual({ id: agent.id, deleted: true });
    expect((await apiError(() => client.agents.get(agent.id))).code).toBe("agent_not_found");

    // Every request carried the key; the POST alone carried an Idempotency-Key, a fresh UUID.
    expect(sent.every((s) => s.headers.get("authorization") === `Bearer ${acct.key}`)).toBe(true);
    expect(sent.map((s) => [s.method, UUID.test(s.headers.get("idempotency-key") ?? "")])).toEqual([
      ["POST", true],
      ["GET", false],
      ["GET", false],
      ["PATCH", false],
      ["GET", false],
      ["DELETE", false],
      ["GET", false],
    ]);
  });

  it("follows cursors to the end: 5 agents at 2 a page, each seen exactly once", async () => {
    const own = await app.account();
    const { client, sent } = loggedClient(own.key);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await client.agents.create({ ...agentBody, name: `Agent ${i}` })).id);
    sent.length = 0;

    const seen: string[] = [];
    for await (const agent of client.agents.list({ limit: 2, order: "asc" })) seen.push(agent.id);
    expect(seen).toEqual(created);

    // Three requests: the first without a cursor, each next one with the previous page's.
    expect(sent.map((s) => [s.path, s.query.get("limit"), s.query.get("order"), s.query.has("cursor")])).toEqual([
      ["/v1/agents", "2", "asc", false],
      ["/v1/agents", "2", "asc", true],
      ["/v1/agents", "2", "asc", true],
    ]);

    const pages = [];
    for await (const page of client.agents.list({ limit: 2 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.data.length, p.has_more, p.total])).toEqual([
      [2, true, 5],
      [2, true, 5],
      [1, false, 5],
    ]);
    expect(pages.flatMap((p) => p.data.map((a) => a.id))).toEqual([...created].reverse());

    // Stopping early fetches no further page.
    sent.length = 0;
    for await (const agent of client.agents.list({ limit: 2 })) {
      expect(agent.id).toBe(created[4]);
      break;
    }
    expect(sent).toHaveLength(1);
    expect((await client.agents.list({ limit: 3 }).firstPage()).data).toHaveLength(3);
  });

  it("keeps a list's filters on every page: calls.list({ status: 'completed' })", async () => {
    const own = await app.account();
    const { client } = loggedClient(own.key);
    const agent = await client.agents.create(agentBody);
    const completed = new Set<string>();
    const start = Date.now() - 60_000;
    for (let i = 0; i < 8; i++) {
      const status = i % 3 === 2 ? "failed" : "completed";
      const row = await insertCallRow(app.parley.services.db, {
        account_id: own.id,
        agent_id: agent.id,
        status,
        created_at: new Date(start + i * 1000).toISOString(),
      });
      if (status === "completed") completed.add(row.id);
    }
    expect(completed.size).toBe(6);

    const seen: CallListItem[] = [];
    for await (const call of client.calls.list({ status: "completed", limit: 2 })) seen.push(call);
    expect(seen.map((c) => c.status).every((s) => s === "completed")).toBe(true);
    expect(seen.map((c) => c.id).sort()).toEqual([...completed].sort());
    expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
  });

  it("registers a number, places a call and hangs it up", async () => {
    const own = await app.account();
    const { client, sent } = loggedClient(own.key);
    const agent = await client.agents.create(agentBody);
    const number = await client.phoneNumbers.create({ phone_number: freshNumber(), country: "US" });
    expect(number.status).toBe("pending");
    await app.approveNumber(number.id);
    expect((await client.phoneNumbers.get(number.id)).status).toBe("active");

    const call = await client.calls.create({ phone_number: "+14155550123", agent_id: agent.id, metadata: { order: 42 } });
    expect(call).toMatchObject({ status: "queued", agent_id: agent.id, from_number: number.phone_number, metadata: { order: 42 } });
    expect((await client.calls.get(call.id)).status).toBe("queued");

    const ended = await client.calls.hangUp(call.id);
    expect(ended).toMatchObject({ id: call.id, status: "failed" });
    const again = await apiError(() => client.calls.hangUp(call.id));
    expect([again.status, again.code]).toEqual([409, "call_already_ended"]);
    expect(await client.calls.deleteContent(call.id)).toMatchObject({ id: call.id, status: "failed" });
    // The two hang-ups are two logical calls: two keys.
    const keys = sent.filter((s) => s.path.endsWith("/end")).map((s) => s.headers.get("idempotency-key"));
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
  });
});

describe("the other resource helpers reach their routes", () => {
  it("phone numbers, webhooks and their deliveries, events, account, campaigns", async () => {
    const own = await app.account();
    const { client, sent } = loggedClient(own.key);
    const agent = await client.agents.create(agentBody);

    const number = await client.phoneNumbers.create({ phone_number: freshNumber(), country: "US", friendly_name: "Front desk" });
    await app.approveNumber(number.id);
    expect(await client.phoneNumbers.update(number.id, { default_agent_id: agent.id })).toMatchObject({ id: number.id, default_agent_id: agent.id });
    expect((await client.phoneNumbers.list({ status: "active" }).toArray()).map((n) => n.id)).toEqual([number.id]);

    const receiver = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const webhook = await client.webhooks.create({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, events: ["call.completed"], description: "ops" });
      expect(await client.webhooks.get(webhook.id)).not.toHaveProperty("secret");
      expect(await client.webhooks.update(webhook.id, { description: "ops team" })).toMatchObject({ description: "ops team" });
      expect((await client.webhooks.list().toArray()).map((w) => w.id)).toEqual([webhook.id]);
      const attempt = await client.webhooks.test(webhook.id);
      const deliveries = await client.webhooks.deliveries(webhook.id).toArray();
      expect(deliveries.map((d) => d.id)).toEqual([attempt.id]);
      expect(await client.webhooks.delivery(webhook.id, attempt.id)).toMatchObject({ id: attempt.id, status: "delivered" });
      expect(await client.webhooks.redeliver(webhook.id, attempt.id)).toMatchObject({ id: attempt.id });
      expect(await client.webhooks.delete(webhook.id)).toEqual({ id: webhook.id, deleted: true });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }

    const events = await client.events.list({ name: "agent.created" }).toArray();
    expect(events.map((e) => e.data.id)).toEqual([agent.id]);
    expect(await client.events.get(events[0]!.id)).toMatchObject({ id: events[0]!.id, event: "agent.created" });

    const account = await client.account.get();
    expect(account.id).toBe(own.id);
    expect(Array.isArray(await client.account.ledger().toArray())).toBe(true);
    expect(await client.account.key()).toMatchObject({ permissions: ["*"] });

    const campaign = await client.campaigns.create({
      name: "Reminders",
      agent_id: agent.id,
      contacts: [{ phone: "+14155550123" }, { phone: "+14155550124" }],
      settings: { schedule: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(await client.campaigns.get(campaign.id)).toMatchObject({ id: campaign.id, name: "Reminders" });
    expect((await client.campaigns.list().toArray()).map((c) => c.id)).toEqual([campaign.id]);
    expect((await client.campaigns.contacts(campaign.id, { limit: 1 }).toArray()).map((c) => c.phone).sort()).toEqual(["+14155550123", "+14155550124"]);
    expect(await client.campaigns.results(campaign.id)).toContain("+14155550124");
    expect((await client.campaigns.cancel(campaign.id)).status).toBe("cancelled");
    const refused = await apiError(() => client.campaigns.resume(campaign.id));
    expect([refused.status, refused.code]).toEqual([409, "invalid_campaign_state"]);

    expect(sent.every((s) => s.headers.get("authorization") === `Bearer ${own.key}`)).toBe(true);
  });
});

describe("typed errors", () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await app.account();
  });

  it("a 404 carries the API's code, message and request id", async () => {
    const { client } = loggedClient(acct.key);
    const err = await apiError(() => client.agents.get("agent_doesnotexist"));
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("ParleyApiError");
    expect([err.status, err.code]).toEqual([404, "agent_not_found"]);
    expect(err.message.length).toBeGreaterThan(0);
    expect(err.requestId).toMatch(/^req_/);
    expect(err.requestId).toBe(err.headers.get("x-request-id"));
    expect(err.retryAfter).toBeNull();
  });

  it("a 400 names the refused field in details", async () => {
    const { client, sent } = loggedClient(acct.key);
    const err = await apiError(() => client.agents.create({ ...agentBody, temperature: 5 }));
    expect([err.status, err.code]).toEqual([400, "invalid_request"]);
    expect(err.fields.map((f) => f.field)).toEqual(["temperature"]);
    expect(err.details).toEqual({ fields: [{ field: "temperature", message: expect.any(String) }] });
    expect(err.message).toContain("temperature");
    // A field with its own code uses it.
    const voice = await apiError(() => client.agents.create({ ...agentBody, voice_id: "no-such-voice" }));
    expect([voice.code, voice.fields.map((f) => f.field)]).toEqual(["invalid_voice_id", ["voice_id"]]);
    expect(sent).toHaveLength(2); // 4xx answers are never retried
  });

  it("a bad key is 401 invalid_api_key", async () => {
    const { client } = loggedClient("sk_parley_not_a_key");
    const err = await apiError(() => client.agents.list().firstPage());
    expect([err.status, err.code]).toEqual([401, "invalid_api_key"]);
  });

  it("client.api answers {data, error} without throwing, fully typed", async () => {
    const { client } = loggedClient(acct.key);
    const missing = await client.api.GET("/v1/agents/{agent_id}", { params: { path: { agent_id: "agent_nope" } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe("agent_not_found");
    const voices = await client.api.GET("/v1/voices");
    expect(voices.data?.data.map((v) => v.id)).toContain("flite-slt");
    expect((await client.voices.list()).map((v) => v.id)).toContain("flite-slt");
  });
});

describe("idempotency keys", () => {
  it("the same key replays the first answer; another body under it is a conflict", async () => {
    const own = await app.account();
    const { client, sent } = loggedClient(own.key);
    const idempotencyKey = randomUUID();
    const first = await client.agents.create(agentBody, { idempotencyKey });
    const second = await client.agents.create(agentBody, { idempotencyKey });
    expect(second).toEqual(first);
    expect(sent.map((s) => s.headers.get("idempotency-key"))).toEqual([idempotencyKey, idempotencyKey]);
    expect((await client.agents.list().firstPage()).total).toBe(1);

    // On client.api the replay shows in the server's header.
    const rawKey = randomUUID();
    const body = { ...agentBody, name: "Raw" };
    const original = await client.api.POST("/v1/agents", { body, headers: { "Idempotency-Key": rawKey } });
    const replay = await client.api.POST("/v1/agents", { body, headers: { "Idempotency-Key": rawKey } });
    expect(original.response.status).toBe(201);
    expect(original.response.headers.get("idempotent-replayed")).toBeNull();
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.data).toEqual(original.data);

    sent.length = 0;
    const conflict = await apiError(() => client.agents.create({ ...agentBody, name: "Other" }, { idempotencyKey }));
    expect([conflict.status, conflict.code]).toEqual([409, "idempotency_key_conflict"]);
    expect(sent).toHaveLength(1);
    expect((await client.agents.list().firstPage()).total).toBe(2);
  });
});

describe("rate limits against the real service", () => {
  it("throws a 429 at once when its Retry-After is longer than the client waits", async () => {
    const own = await app.account();
    await app.parley.services.accounts.setLimits(own.id, { requestsPerMinute: 1 });
    const { client, sent } = loggedClient(own.key, { maxRetries: 2, maxRetryAfterSeconds: 5 });
    await client.agents.list().firstPage();
    const err = await apiError(() => client.agents.list().firstPage());
    expect([err.status, err.code]).toEqual([429, "rate_limit_exceeded"]);
    expect(err.retryAfter).toBeGreaterThan(5);
    expect(err.headers.get("x-ratelimit-limit")).toBe("1");
    expect(sent).toHaveLength(2);
  });
});

describe("retries (a scripted server on loopback)", () => {
  interface Arrival {
    method: string;
    url: string;
    headers: IncomingHttpHeaders;
    body: string;
    at: number;
  }
  type Answer = { status: number; headers?: Record<string, string>; body?: unknown };
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  let arrivals: Arrival[] = [];

  const envelope = (code: string) => ({ error: { code, message: `scripted ${code}` }, meta: { request_id: "req_scripted" } });

  function answer(res: ServerResponse, a: Answer) {
    const text = typeof a.body === "string" ? a.body : JSON.stringify(a.body ?? {});
    res.writeHead(a.status, { "content-type": typeof a.body === "string" ? "text/plain" : "application/json", ...a.headers }).end(text);
  }

  function run(answers: Answer[]) {
    script = [...answers];
    arrivals = [];
  }

  const client = (options: Partial<ParleyClientOptions> = {}) => createParleyClient({ baseUrl, apiKey: "sk_parley_scripted", ...options });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        arrivals.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
        answer(res, script.shift() ?? { status: 500, body: envelope("script_exhausted") });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("retries a 429 after its Retry-After, with the same Idempotency-Key and body", async () => {
    const created = { id: "agent_scripted", name: "Receptionist" };
    run([
      { status: 429, headers: { "retry-after": "1" }, body: envelope("rate_limit_exceeded") },
      { status: 201, body: created },
    ]);
    const agent = await client().agents.create(agentBody);
    expect(agent).toEqual(created);
    expect(arrivals).toHaveLength(2);
    const [first, second] = arrivals as [Arrival, Arrival];
    expect(first.headers["idempotency-key"]).toMatch(UUID);
    expect(second.headers["idempotency-key"]).toBe(first.headers["idempotency-key"]);
    expect(JSON.parse(second.body)).toEqual(agentBody);
    expect(second.body).toBe(first.body);
    // Waited for Retry-After (a lower bound: timers never fire early).
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
  });

  it("gives up after maxRetries and throws the last 429", async () => {
    run([0, 1, 2].map(() => ({ status: 429, headers: { "retry-after": "0" }, body: envelope("rate_limit_exceeded") })));
    const err = await apiError(() => client({ maxRetries: 2 }).agents.get("agent_x"));
    expect([err.status, err.code, err.requestId, err.retryAfter]).toEqual([429, "rate_limit_exceeded", "req_scripted", 0]);
    expect(arrivals).toHaveLength(3);

    run([{ status: 429, headers: { "retry-after": "0" }, body: envelope("rate_limit_exceeded") }]);
    expect((await apiError(() => client({ maxRetries: 0 }).agents.get("agent_x"))).status).toBe(429);
    expect(arrivals).toHaveLength(1);
  });

  it("retries a 503 only when it carries Retry-After", async () => {
    run([
      { status: 503, headers: { "retry-after": "0" }, body: envelope("shutting_down") },
      { status: 200, body: { id: "call_x", status: "failed" } },
    ]);
    expect(await client().calls.hangUp("call_x")).toEqual({ id: "call_x", status: "failed" });
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]!.headers["idempotency-key"]).toBe(arrivals[0]!.headers["idempotency-key"]);

    run([{ status: 503, body: "Service Unavailable" }]);
    const err = await apiError(() => client().calls.hangUp("call_x"));
    expect([err.status, err.code, err.requestId]).toEqual([503, "unexpected_response", null]);
    expect(err.message).toContain("Service Unavailable");
    expect(arrivals).toHaveLength(1);
  });

  it("never retries another 4xx or a 500", async () => {
    for (const [status, code] of [
      [400, "invalid_request"],
      [404, "agent_not_found"],
      [409, "idempotency_key_in_use"],
      [500, "internal_error"],
    ] as const) {
      run([{ status, headers: { "retry-after": "0" }, body: envelope(code) }]);
      const err = await apiError(() => client().agents.create(agentBody));
      expect([err.status, err.code]).toEqual([status, code]);
      expect(arrivals).toHaveLength(1);
    }
  });
});

describe("webhook signatures", () => {
  it("verifies a real delivery of POST /v1/webhooks/{id}/test, and refuses it altered", async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const own = await app.account();
      const { client } = loggedClient(own.key);
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const webhook = await client.webhooks.create({ url, events: ["*"] });
      expect(webhook.secret).toMatch(/^whsec_/);
      const attempt = await client.webhooks.test(webhook.id);
      expect(attempt).toMatchObject({ webhook_id: webhook.id, event: "webhook.test", status: "delivered" });
      expect(received).toHaveLength(1);

      const { headers, body } = received[0]!;
      const header = headers["x-parley-signature"];
      const verified = verifyWebhookSignature({ payload: body, header, secret: webhook.secret });
      expect(Math.abs(verified.timestamp - Date.now() / 1000)).toBeLessThan(60);
      expect(verifyWebhookSignature({ payload: Buffer.from(body), header, secret: webhook.secret })).toEqual(verified);
      const event = verifyWebhookEvent({ payload: body, header, secret: webhook.secret });
      expect(event).toMatchObject({ event: "webhook.test", webhook_id: webhook.id, event_id: attempt.event_id });

      const tampered = body.replace('"webhook.test"', '"webhook.tesT"');
      expect(tampered).not.toBe(body);
      expect(signatureFailure(() => verifyWebhookSignature({ payload: tampered, header, secret: webhook.secret }))).toBe("signature_mismatch");
      expect(signatureFailure(() => verifyWebhookSignature({ payload: body, header, secret: "whsec_someone_else_0123456789" }))).toBe("signature_mismatch");
      // Re-serialized JSON is not the raw body.
      expect(signatureFailure(() => verifyWebhookSignature({ payload: JSON.stringify(JSON.parse(body), null, 1), header, secret: webhook.secret }))).toBe(
        "signature_mismatch",
      );
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it("checks the server's own signing: tolerance, missing and malformed headers", () => {
    const secret = "whsec_client_test_0123456789abcdef";
    const body = JSON.stringify({ event: "call.completed", data: { call_id: "call_1" } });
    const now = Math.floor(Date.now() / 1000);
    const sign = (t: number) => webhookSignature(secret, body, t);

    expect(verifyWebhookSignature({ payload: body, header: sign(now), secret })).toEqual({ timestamp: now });
    expect(verifyWebhookSignature({ payload: body, header: sign(now - 300), secret, now })).toEqual({ timestamp: now - 300 });
    expect(signatureFailure(() => verifyWebhookSignature({ payload: body, header: sign(now - 301), secret, now }))).toBe("timestamp_outside_tolerance");
    expect(signatureFailure(() => verifyWebhookSignature({ payload: body, header: sign(now + 301), secret, now }))).toBe("timestamp_outside_tolerance");
    expect(verifyWebhookSignature({ payload: body, header: sign(now - 3600), secret, toleranceSeconds: 7200 }).timestamp).toBe(now - 3600);
    // An old signature with its timestamp moved forward no longer matches.
    const replayed = sign(now - 3600).replace(`t=${now - 3600}`, `t=${now}`);
    expect(signatureFailure(() => verifyWebhookSignature({ payload: body, header: replayed, secret }))).toBe("signature_mismatch");

    const digest = sign(now).split("v1=")[1]!;
    expect(signatureFailure(() => verifyWebhookSignature({ payload: body, header: undefined, secret }))).toBe("missing_header");
    expect(signatureFailure(() => verifyWebhookSignature({ payload: body, header: "", secret }))).toBe("missing_header");
    for (const header of ["garbage", `v1=${digest}`, `t=${now}`, `t=soon,v1=${digest}`, `t=${now},v1=${digest.slice(2)}`, `t=${now},t=${now - 1},v1=${digest}`]) {
      expect([header, signatureFailure(() => verifyWebhookSignature({ payload: body, header, secret }))]).toEqual([header, "malformed_header"]);
    }
    // Several v1 values (merged headers): one that matches is enough; a list from Node is joined.
    expect(verifyWebhookSignature({ payload: body, header: `t=${now},v1=${"0".repeat(64)},v1=${digest}`, secret }).timestamp).toBe(now);
    expect(verifyWebhookSignature({ payload: body, header: [sign(now)], secret }).timestamp).toBe(now);

    expect(() => verifyWebhookSignature({ payload: JSON.parse(body) as string, header: sign(now), secret })).toThrow(TypeError);
    expect(() => verifyWebhookSignature({ payload: body, header: sign(now), secret: "" })).toThrow(TypeError);
  });
});
