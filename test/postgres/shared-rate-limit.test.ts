import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgresCluster, type PostgresCluster } from "../helpers/postgres-cluster.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// Two nodes on one PostgreSQL database count an account's requests together: a client spreading
// its requests over the nodes behind a load balancer gets the account's rate, not one per node.

let cluster: PostgresCluster;
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  cluster = await startPostgresCluster();
  const url = await cluster.createDatabase();
  a = await startTestApp({}, { PARLEY_DATABASE_URL: url });
  b = await startTestApp({}, { PARLEY_DATABASE_URL: url });
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
  await cluster?.stop();
});

describe("request rates across nodes", () => {
  it("let through exactly the account's limit however its requests are spread, each count handed out once", async () => {
    const LIMIT = 12;
    const acct = await a.account();
    await a.parley.services.accounts.setLimits(acct.id, { requestsPerMinute: LIMIT });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? b : a).request("GET", "/v1/agents", { key: acct.key })));
    const passed = results.filter((r) => r.status === 200);
    expect(passed).toHaveLength(LIMIT);
    expect(results.filter((r) => r.status === 429)).toHaveLength(30 - LIMIT);
    expect(passed.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((x, y) => x - y)).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
    // Both nodes answer with the one window's reset.
    expect(new Set(results.map((r) => r.headers.get("x-ratelimit-reset"))).size).toBe(1);
    // Another account has its own window.
    const other = await b.account();
    expect((await a.request("GET", "/v1/agents", { key: other.key })).status).toBe(200);
  });

  it("take counts from the window several at a time, still letting through exactly the limit", async () => {
    const LIMIT = 200;
    const acct = await a.account();
    await a.parley.services.accounts.setLimits(acct.id, { requestsPerMinute: LIMIT });
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 260; i++) {
      const response = await (i % 2 ? b : a).request("GET", "/v1/agents", { key: acct.key });
      statuses.push(response.status);
      if (response.status === 200) remaining.push(Number(response.headers.get("x-ratelimit-remaining")));
      if (i === 0) {
        // The first node took a twentieth of the limit at once.
        const row = await a.parley.services.db.selectFrom("rate_windows").selectAll().where("key", "=", `account:${acct.id}`).executeTakeFirstOrThrow();
        expect(row).toMatchObject({ count: LIMIT / 20, leased: LIMIT / 20 });
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(260 - LIMIT);
    // Each count handed out once, across both nodes.
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  });
});
