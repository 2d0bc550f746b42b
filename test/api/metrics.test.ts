import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { isLoopback } from "../../src/http/metrics-endpoint.js";
import { parseExposition } from "../helpers/prometheus-text.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

const TOKEN = "metrics-token-0123456789abcdef";

async function scrape(app: TestApp, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.baseUrl}/metrics`, { headers });
  return { status: res.status, contentType: res.headers.get("content-type"), headers: res.headers, text: await res.text() };
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("GET /metrics with PARLEY_METRICS_TOKEN set", () => {
  let app: TestApp;
  beforeAll(async () => {
    // A tiny per-minute budget: scrapes must not count against the anonymous (per-address) request limit.
    app = await startTestApp({}, { PARLEY_METRICS_TOKEN: TOKEN, PARLEY_PLAN_PRO_REQUESTS_PER_MINUTE: "2" });
  });
  afterAll(() => app.close());

  it("refuses a request without the token, or with a wrong one, with 401 in the error envelope", async () => {
    for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }, { authorization: "Bearer " }]) {
      const res = await scrape(app, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      const body = JSON.parse(res.text);
      expect(body.error.code).toBe("invalid_metrics_token");
      expect(body.meta.request_id).toMatch(/^req/);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(res.text).not.toContain("parley_");
    }
  });

  it("serves the Prometheus text format (0.0.4) with the right token, any number of times", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await scrape(app, { authorization: `Bearer ${TOKEN}` });
      expect(res.status).toBe(200);
      expect(res.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
      const exposition = parseExposition(res.text);
      for (const name of ["parley_calls_live", "parley_http_request_duration_seconds", "parley_storage_failures_total", "nodejs_eventloop_lag_seconds"]) {
        expect(exposition.declared, name).toContain(name);
      }
      // Known series start at 0.
      expect(exposition.samples).toContainEqual({ name: "parley_storage_failures_total", labels: { target: "recording" }, value: 0 });
      expect(exposition.samples).toContainEqual({ name: "parley_storage_failures_total", labels: { target: "database" }, value: 0 });
    }
  });
});

describe("GET /metrics without a token", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("serves loopback clients (the test's), and counts requests by route template and status, never by raw path", async () => {
    const acct = await app.account();
    for (let i = 0; i < 3; i++) expect((await app.request("GET", "/v1/agents", { key: acct.key })).status).toBe(200);
    expect((await app.request("GET", "/v1/agents/agent_doesnotexist1", { key: acct.key })).status).toBe(404);
    expect((await app.request("GET", "/v1/agents/agent_doesnotexist2", { key: acct.key })).status).toBe(404);
    expect((await app.request("GET", "/v1/agents", { key: "pk_wrong" })).status).toBe(401);
    expect((await app.request("GET", "/no/such/path/4711")).status).toBe(404);
    expect((await app.request("GET", "/healthz")).status).toBe(200);

    const res = await scrape(app);
    expect(res.status).toBe(200);
    const m = parseExposition(res.text);
    const count = (labels: Record<string, string>) => m.value("parley_http_request_duration_seconds_count", labels);
    expect(count({ method: "GET", route: "/v1/agents", status: "200" })).toBe(3);
    expect(count({ method: "GET", route: "/v1/agents", status: "401" })).toBe(1);
    expect(count({ method: "GET", route: "/v1/agents/:agent_id", status: "404" })).toBe(2);
    expect(count({ method: "GET", route: "unmatched", status: "404" })).toBe(1);
    expect(count({ method: "GET", route: "/healthz", status: "200" })).toBe(1);
    // The histogram's buckets hold the same requests.
    expect(m.value("parley_http_request_duration_seconds_bucket", { method: "GET", route: "/v1/agents", status: "200", le: "+Inf" })).toBe(3);
    // No raw path or id becomes a label value.
    expect(res.text).not.toContain("doesnotexist");
    expect(res.text).not.toContain("4711");
    const routes = new Set(m.samples.filter((s) => s.name === "parley_http_request_duration_seconds_count").map((s) => s.labels.route));
    expect([...routes].sort()).toEqual(["/healthz", "/v1/agents", "/v1/agents/:agent_id", "unmatched"]);
  });
});

describe("campaign progress", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("gauges the contacts of campaigns not yet over by status, read at each scrape", async () => {
    const acct = await app.account();
    const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Caller", system_prompt: "You call.", voice_id: "flite-slt" } });
    const contacts = [{ phone: "+14155550101" }, { phone: "+14155550102" }, { phone: "+14155550103" }];
    const created = await app.request("POST", "/v1/campaigns", { key: acct.key, body: { agent_id: agent.body.id, name: "Spring", contacts } });
    expect(created.status).toBe(201);
    const pending = async () => parseExposition((await scrape(app)).text).value("parley_campaign_contacts", { status: "pending" });
    expect(await pending()).toBe(3);
    // A cancelled campaign is over: its contacts leave the gauge.
    expect((await app.request("POST", `/v1/campaigns/${created.body.id}/cancel`, { key: acct.key })).status).toBe(200);
    expect(await pending()).toBe(0);
    expect(parseExposition((await scrape(app)).text).value("parley_campaign_contacts", { status: "cancelled" })).toBe(0);
  });
});

describe("the Grafana dashboard (docs/grafana/parley-dashboard.json)", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("queries only metrics /metrics exposes, and covers every area", async () => {
    const dashboard = JSON.parse(readFileSync(new URL("../../docs/grafana/parley-dashboard.json", import.meta.url), "utf8"));
    const exprs: string[] = dashboard.panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b(?:parley|nodejs)_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ""))));
    const exposed = parseExposition((await scrape(app)).text).declared;
    expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
    // A panel for each area the operator watches.
    for (const name of [
      "parley_calls_live",
      "parley_calls_ended_total",
      "parley_turn_latency_seconds",
      "parley_barge_ins_total",
      "parley_provider_errors_total",
      "parley_webhook_attempts_total",
      "parley_webhook_delivery_delay_seconds",
      "parley_campaign_contacts",
      "parley_http_request_duration_seconds",
      "nodejs_eventloop_lag_p99_seconds",
      "parley_pool_in_use",
    ]) {
      expect(used, name).toContain(name);
    }
  });
});

describe("the loopback rule", () => {
  it("takes IPv4 loopback (also IPv4-mapped) and ::1, nothing else", () => {
    for (const address of ["127.0.0.1", "127.1.2.3", "::ffff:127.0.0.1", "::1"]) expect(isLoopback(address), address).toBe(true);
    for (const address of ["10.0.0.1", "192.168.1.2", "::ffff:10.0.0.1", "fe80::1", "2001:db8::1", "::", undefined]) expect(isLoopback(address), String(address)).toBe(false);
  });
});

describe("PARLEY_METRICS_TOKEN", () => {
  it("must be at least 16 characters, and is not quoted in the error", () => {
    expect(() => loadConfig({ env: { PARLEY_METRICS_TOKEN: "short-secret" }, cwd: "/nonexistent" })).toThrow(/PARLEY_METRICS_TOKEN.*at least 16 characters/);
    expect(() => loadConfig({ env: { PARLEY_METRICS_TOKEN: "short-secret" }, cwd: "/nonexistent" })).not.toThrow(/short-secret/);
    expect(loadConfig({ env: { PARLEY_METRICS_TOKEN: TOKEN }, cwd: "/nonexistent" }).metrics.token).toBe(TOKEN);
  });
});

describe("webhook delivery metrics", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_RETRY_SCHEDULE: "30ms,60ms", PARLEY_WEBHOOK_TIMEOUT_MS: "1000" });
  });
  afterAll(() => app.close());

  it("count each attempt by result and each delivery by outcome, with the delay of the delivered ones", async () => {
    const receiver = await startWebhookReceiver();
    try {
      // First attempt 500, then 200: one http_error, one success, one delivery delivered.
      receiver.answer((_req, index) => (index === 0 ? { status: 500, body: "down" } : { status: 200 }));
      const acct = await app.account();
      const hook = await app.request("POST", "/v1/webhooks", { key: acct.key, body: { url: receiver.url, events: ["agent.created"] } });
      expect(hook.status).toBe(201);
      expect((await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Metrics", system_prompt: "Hi.", voice_id: "flite-slt" } })).status).toBe(201);
      await receiver.waitFor(2);
      const read = async () => parseExposition((await scrape(app)).text);
      await until(async () => (await read()).value("parley_webhook_deliveries_total", { outcome: "delivered" }) === 1, "the delivery counted");
      const m = await read();
      expect(m.value("parley_webhook_attempts_total", { result: "http_error" })).toBe(1);
      expect(m.value("parley_webhook_attempts_total", { result: "success" })).toBe(1);
      expect(m.value("parley_webhook_attempts_total", { result: "no_response" })).toBe(0);
      expect(m.value("parley_webhook_deliveries_total", { outcome: "failed" })).toBe(0);
      expect(m.value("parley_webhook_delivery_delay_seconds_count")).toBe(1);
      // Delivered after a 30 ms retry wait: the delay counts from the event, retries included.
      expect(m.value("parley_webhook_delivery_delay_seconds_sum")).toBeGreaterThanOrEqual(0.03);
    } finally {
      await receiver.close();
    }
  });
});
