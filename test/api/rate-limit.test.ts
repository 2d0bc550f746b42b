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
});
