import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    plans: {
      pro: { requestsPerMinute: 5, agents: 25, webhooks: 10, concurrentCalls: 10, queuedCalls: 100 },
      agency: { requestsPerMinute: 8, agents: 250, webhooks: 50, concurrentCalls: 50, queuedCalls: 1000 },
    },
  });
});
afterAll(async () => {
  await app.close();
});

describe("rate limits", () => {
  it("counts requests per account with headers on every response, then answers 429", async () => {
    const a = await app.account({ plan: "pro" });
    const seen: Array<[number, string | null, string | null]> = [];
    for (let i = 0; i < 6; i++) {
      const res = await app.request("GET", "/v1/agents", { key: a.key });
      seen.push([res.status, res.headers.get("x-ratelimit-limit"), res.headers.get("x-ratelimit-remaining")]);
    }
    expect(seen).toEqual([
      [200, "5", "4"],
      [200, "5", "3"],
      [200, "5", "2"],
      [200, "5", "1"],
      [200, "5", "0"],
      [429, "5", "0"],
    ]);
    const limited = await app.request("GET", "/v1/agents", { key: a.key });
    expect(limited.status).toBe(429);
    expect(errorOf(limited).code).toBe("rate_limit_exceeded");
    const reset = Number(limited.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("keeps accounts apart, uses the plan's rate and the account's override", async () => {
    const agency = await app.account({ plan: "agency" });
    const res = await app.request("GET", "/v1/agents", { key: agency.key });
    expect(res.headers.get("x-ratelimit-limit")).toBe("8");

    const custom = await app.account({ plan: "pro" });
    await app.parley.services.accounts.setLimits(custom.id, { requestsPerMinute: 2 });
    expect((await app.request("GET", "/v1/agents", { key: custom.key })).status).toBe(200);
    expect((await app.request("GET", "/v1/agents", { key: custom.key })).status).toBe(200);
    expect((await app.request("GET", "/v1/agents", { key: custom.key })).status).toBe(429);
  });

  it("throttles requests without a valid key by client address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await app.request("GET", "/v1/agents", { key: "sk_parley_guess" + i })).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429]);
  });

  it("holds under a concurrent burst: exactly the limit passes, each count once; the rest are 429 with consistent headers; another account is untouched", async () => {
    const LIMIT = 20;
    const burst = await app.account({ plan: "pro" });
    await app.parley.services.accounts.setLimits(burst.id, { requestsPerMinute: LIMIT });
    const bystander = await app.account({ plan: "agency" });
    // Every request on its own connection, all sent at once: the server sees them interleaved.
    const results = await Promise.all([
      ...Array.from({ length: LIMIT + 50 }, () => rawGet(app.baseUrl, "/v1/agents", burst.key)),
      ...Array.from({ length: 5 }, () => rawGet(app.baseUrl, "/v1/agents", bystander.key)),
    ]);
    const mine = results.slice(0, LIMIT + 50);
    const passed = mine.filter((r) => r.status === 200);
    const refused = mine.filter((r) => r.status === 429);
    expect(passed).toHaveLength(LIMIT);
    expect(refused).toHaveLength(50);
    // Each remaining count was handed out once: no two requests were let through on one count.
    expect(passed.map((r) => Number(r.headers["x-ratelimit-remaining"])).sort((a, b) => a - b)).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
    // One window (windows start at an account's first request and last 60 s: the burst is well inside it).
    const resets = new Set(mine.map((r) => r.headers["x-ratelimit-reset"]));
    expect(resets.size).toBe(1);
    const reset = Number([...resets][0]);
    for (const r of mine) expect(r.headers["x-ratelimit-limit"]).toBe(String(LIMIT));
    for (const r of refused) {
      expect(r.headers["x-ratelimit-remaining"]).toBe("0");
      expect(JSON.parse(r.body).error.code).toBe("rate_limit_exceeded");
      // Retry-After is the wait until the window's reset, from the moment of the answer (its Date, to the second).
      const retryAfter = Number(r.headers["retry-after"]);
      // Whole seconds rounded up: at most 61 (a 60 s window that started mid-second).
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 61).toBe(true);
      const answeredAt = Date.parse(r.headers.date as string) / 1000;
      expect(Math.abs(reset - retryAfter - answeredAt)).toBeLessThanOrEqual(1);
    }
    expect(results.slice(LIMIT + 50).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });
});

/** One GET on a connection of its own (no keep-alive pool): a burst of these is a burst of sockets. */
function rawGet(baseUrl: string, path: string, key: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(baseUrl + path, { agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
