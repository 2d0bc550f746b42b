import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { errorOf, startTestApp, type TestApp } from "../helpers/test-app.js";

// Key lookups are kept while the database is unchanged (ApiKeysService). What a request sees
// must still be what the database holds now: a write by this process or by another one (the
// admin CLI, here a second connection on the same file) is seen by the very next request. On
// PostgreSQL another connection's write is seen when its notification reaches the node
// (PostgresChanges), a moment after it commits: there the test allows it that moment.

let app: TestApp;
/** Another connection on the service's database, as `parley admin` (or another node) opens it. */
let other: Db;

beforeAll(async () => {
  app = await startTestApp();
  other = app.openDatabase();
});
afterAll(async () => {
  await other.destroy();
  await app.close();
});

const agents = (key: string) => app.request("GET", "/v1/agents", { key });
/** The next request's answer; on PostgreSQL, the first within 5 s that is not `stale`. */
const afterOtherWrite = async (key: string, stale: (response: Awaited<ReturnType<typeof agents>>) => boolean) => {
  let response = await agents(key);
  for (const end = Date.now() + 5_000; app.onPostgres && stale(response) && Date.now() < end; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    response = await agents(key);
  }
  return response;
};

describe("authentication with kept key lookups", () => {
  it("refuses a key revoked by another process at the next request", async () => {
    const account = await app.account();
    for (let i = 0; i < 3; i++) expect((await agents(account.key)).status).toBe(200);
    await other.updateTable("api_keys").set({ revoked_at: new Date().toISOString() }).where("account_id", "=", account.id).execute();
    const refused = await afterOtherWrite(account.key, (r) => r.status === 200);
    expect(refused.status).toBe(401);
    expect(errorOf(refused)).toMatchObject({ code: "invalid_api_key", message: "This API key has been revoked" });
  });

  it("refuses a key revoked in this process at the next request", async () => {
    const account = await app.account();
    for (let i = 0; i < 2; i++) expect((await agents(account.key)).status).toBe(200);
    const [key] = await app.parley.services.apiKeys.list(account.id);
    expect(await app.parley.services.apiKeys.revoke(key!.id)).toBe(true);
    expect((await agents(account.key)).status).toBe(401);
  });

  it("applies a rate limit changed by another process at the next request", async () => {
    const account = await app.account();
    // The first request records the key's last use (a write); the second is answered from the kept lookup.
    await agents(account.key);
    const before = await agents(account.key);
    expect(before.headers.get("x-ratelimit-limit")).toBe(String(app.config.plans.pro.requestsPerMinute));
    await other.updateTable("accounts").set({ limit_overrides: JSON.stringify({ requestsPerMinute: 7 }) }).where("id", "=", account.id).execute();
    const after = await afterOtherWrite(account.key, (r) => r.headers.get("x-ratelimit-limit") !== "7");
    expect(after.headers.get("x-ratelimit-limit")).toBe("7");
  });

  it("applies a plan changed in this process at the next request", async () => {
    const account = await app.account({ plan: "pro" });
    await agents(account.key);
    expect((await agents(account.key)).headers.get("x-ratelimit-limit")).toBe(String(app.config.plans.pro.requestsPerMinute));
    await app.parley.services.accounts.setPlan(account.id, "agency");
    expect((await agents(account.key)).headers.get("x-ratelimit-limit")).toBe(String(app.config.plans.agency.requestsPerMinute));
  });

  it("keeps refusing unknown keys, and a key's permissions are its own", async () => {
    const account = await app.account();
    const reader = await app.key(account.id, ["numbers:read"]);
    expect((await agents(account.key)).status).toBe(200);
    expect((await agents(reader)).status).toBe(403);
    expect((await agents(account.key.slice(0, -1) + (account.key.endsWith("a") ? "b" : "a"))).status).toBe(401);
    expect((await agents(account.key)).status).toBe(200);
  });
});
