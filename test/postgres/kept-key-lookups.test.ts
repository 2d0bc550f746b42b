import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { startPostgresCluster, type PostgresCluster } from "../helpers/postgres-cluster.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { until, untilValue } from "../helpers/until.js";

// On PostgreSQL a node keeps API key lookups between requests and drops them when the
// accounts or api_keys tables change: its own writes at once, another node's (or psql's) when
// their notification arrives on the node's listening connection (PostgresChanges).

let cluster: PostgresCluster;
let app: TestApp;
/** Another connection to the node's database, as another node or psql. */
let other: Db;
beforeAll(async () => {
  cluster = await startPostgresCluster();
  app = await startTestApp({}, { PARLEY_DATABASE_URL: await cluster.createDatabase() });
  other = app.openDatabase();
}, 60_000);
afterAll(async () => {
  await other?.destroy();
  await app?.close();
  await cluster?.stop();
});

const agents = (key: string) => app.request("GET", "/v1/agents", { key });
const revokeElsewhere = (accountId: string) => other.updateTable("api_keys").set({ revoked_at: new Date().toISOString() }).where("account_id", "=", accountId).execute();
const listenerPid = async () =>
  (await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN parley_changes' AND datname = current_database()`.execute(other)).rows[0]?.pid;

describe("kept key lookups on PostgreSQL", () => {
  it("are kept between requests and dropped when another connection's change is notified", async () => {
    const account = await app.account();
    expect((await agents(account.key)).status).toBe(200);
    await untilValue("the node listening for changes", listenerPid);
    // With the trigger off, a revocation elsewhere sends no notification: the kept lookup answers.
    await sql`ALTER TABLE api_keys DISABLE TRIGGER api_keys_notify_change`.execute(other);
    try {
      await agents(account.key);
      await revokeElsewhere(account.id);
      expect((await agents(account.key)).status).toBe(200);
    } finally {
      await sql`ALTER TABLE api_keys ENABLE TRIGGER api_keys_notify_change`.execute(other);
    }
    // With it on, the next revocation's notification drops the kept lookups.
    const second = await app.account();
    expect((await agents(second.key)).status).toBe(200);
    await revokeElsewhere(second.id);
    await until("the revoked key refused", async () => (await agents(second.key)).status === 401, 5_000);
    expect((await agents(account.key)).status).toBe(401);
  });

  it("sees this node's own changes at the next request", async () => {
    const account = await app.account();
    await agents(account.key);
    expect((await agents(account.key)).headers.get("x-ratelimit-limit")).toBe(String(app.config.plans.pro.requestsPerMinute));
    await app.parley.services.accounts.setLimits(account.id, { requestsPerMinute: 9 });
    expect((await agents(account.key)).headers.get("x-ratelimit-limit")).toBe("9");
    const [key] = await app.parley.services.apiKeys.list(account.id);
    await app.parley.services.apiKeys.revoke(key!.id);
    expect((await agents(account.key)).status).toBe(401);
  });

  it("keep nothing missed while the listening connection was lost", async () => {
    const account = await app.account();
    expect((await agents(account.key)).status).toBe(200);
    const pid = await untilValue("the node listening for changes", listenerPid);
    // A change no notification tells of (trigger off), then the listening connection cut.
    await sql`ALTER TABLE api_keys DISABLE TRIGGER api_keys_notify_change`.execute(other);
    try {
      await agents(account.key);
      await revokeElsewhere(account.id);
      await sql`SELECT pg_terminate_backend(${pid})`.execute(other);
      // Asked again, the node listens anew (within a second) and reads afresh meanwhile.
      const refused = await untilValue("the key refused", async () => (await agents(account.key)).status === 401);
      expect(refused).toBe(true);
      await untilValue("a new listening connection", async () => {
        await agents(account.key);
        const now = await listenerPid();
        return now !== undefined && now !== pid;
      });
      expect((await agents(account.key)).status).toBe(401);
    } finally {
      await sql`ALTER TABLE api_keys ENABLE TRIGGER api_keys_notify_change`.execute(other);
    }
  });
});
