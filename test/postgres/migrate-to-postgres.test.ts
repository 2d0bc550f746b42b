import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase } from "../../src/db/database.js";
import { openPostgres } from "../../src/db/postgres.js";
import { databaseFile } from "../../src/main.js";
import { runAdmin } from "../helpers/admin-cli.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { startPostgresCluster, type PostgresCluster } from "../helpers/postgres-cluster.js";
import { seedAccount, type SeededAccount } from "../helpers/seed-resources.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

let cluster: PostgresCluster;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [cluster, receiver] = await Promise.all([startPostgresCluster(), startWebhookReceiver()]);
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await cluster?.stop();
});

/** Extra ended calls in the first account: more than one 1,000-row batch. */
const EXTRA_CALLS = 1205;
const TRANSCRIPT = [
  { role: "assistant", content: "Hello, this is the clinic.", timestamp: 1 },
  { role: "user", content: "I would like to move my appointment — to Tuesday.", timestamp: 2 },
];

/** What the API shows an account: every resource the copy must carry over (lists without their signed cursors). */
async function apiView(app: TestApp, seeded: SeededAccount): Promise<Record<string, unknown>> {
  const { key, ids } = seeded;
  const read = async (path: string) => {
    const res = await app.request("GET", path, { key });
    expect(res.status, path).toBe(200);
    const { next_cursor: _cursor, ...rest } = res.body;
    return rest;
  };
  return {
    account: await read("/v1/account"),
    agents: await read("/v1/agents?limit=100"),
    numbers: await read("/v1/phone-numbers?limit=100"),
    calls: await read("/v1/calls?limit=100"),
    call: await read(`/v1/calls/${ids.call_id}?include=transcript,analysis,latency`),
    events: await read("/v1/events?limit=100"),
    webhooks: await read("/v1/webhooks?limit=100"),
    deliveries: await read(`/v1/webhooks/${ids.webhook_id}/deliveries?limit=100`),
    campaign: await read(`/v1/campaigns/${ids.campaign_id}`),
    contacts: await read(`/v1/campaigns/${ids.campaign_id}/contacts?limit=100`),
    appointments: await read("/v1/appointments?limit=100"),
    doNotCall: await read("/v1/do-not-call?limit=100"),
    ledger: await read("/v1/account/ledger?limit=100"),
  };
}

/** Accounts in the target (brought to the schema first: a refused run may not have made it). */
async function countAccounts(url: string): Promise<number> {
  const db = openPostgres(url);
  try {
    await migrateToLatest(db);
    const row = await db.selectFrom("accounts").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await db.destroy();
  }
}

describe("parley admin migrate-to-postgres", () => {
  it("copies a SQLite installation into PostgreSQL, where the API reads the same; a second run refuses", async () => {
    const sqliteApp = await startTestApp();
    expect(sqliteApp.onPostgres).toBe(false);
    const first = await seedAccount(sqliteApp, receiver.url, 1);
    const second = await seedAccount(sqliteApp, receiver.url, 2);
    const db = sqliteApp.openDatabase();
    let transcriptCall: string;
    try {
      transcriptCall = (
        await insertCallRow(db, { account_id: first.id, agent_id: first.ids.agent_id!, status: "completed", duration: 42, transcript: JSON.stringify(TRANSCRIPT), ended_at: new Date().toISOString() })
      ).id;
      for (let i = 0; i < EXTRA_CALLS; i++) {
        await insertCallRow(db, { account_id: first.id, agent_id: first.ids.agent_id!, status: i % 3 === 0 ? "no_answer" : "completed", created_at: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString() });
      }
    } finally {
      await db.destroy();
    }
    const readTranscript = async (app: TestApp) => (await app.request("GET", `/v1/calls/${transcriptCall}?include=transcript`, { key: first.key })).body;
    const before = { first: await apiView(sqliteApp, first), second: await apiView(sqliteApp, second), transcript: await readTranscript(sqliteApp) };
    expect(before.transcript.transcript).toEqual(TRANSCRIPT);
    expect((before.first.calls as { total: number }).total).toBe(EXTRA_CALLS + 2);
    expect((before.first.events as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect((before.first.contacts as { data: unknown[] }).data).toHaveLength(1);

    const url = await cluster.createDatabase();
    const file = databaseFile(sqliteApp.config);
    // While the service has the file open: refused (what it wrote after the copy would be lost).
    const busy = await runAdmin(sqliteApp.config, "migrate-to-postgres", "--from", file, "--to", url);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain("is open in another process");
    expect(await countAccounts(url)).toBe(0);

    await sqliteApp.parley.stop();
    let pgApp: TestApp | undefined;
    try {
      const run = await runAdmin(sqliteApp.config, "migrate-to-postgres", "--from", file, "--to", url, "--json");
      // Both accounts' calls: each seeded one, the one with a transcript and the extra ones.
      const calls = EXTRA_CALLS + 3;
      expect(run.stderr).toContain(`migrate-to-postgres: calls 1000/${calls}`);
      expect(run.stderr).toContain(`migrate-to-postgres: calls ${calls}/${calls}`);
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.rows).toMatchObject({ accounts: 2, calls, campaigns: 2, campaign_contacts: 2, appointments: 2, webhooks: 2, do_not_call: 2 });
      expect(report.rows.events).toBeGreaterThan(0);
      expect(report.rows.deliveries).toBeGreaterThan(0);
      expect(report.rows).not.toHaveProperty("kysely_migration");
      expect(report.rebuilt).toEqual(["call_counts"]);
      expect(report.to).toBe(url);

      pgApp = await startTestApp({}, { PARLEY_DATABASE_URL: url });
      expect(pgApp.onPostgres).toBe(true);
      // The same API keys, and every resource as the SQLite installation showed it.
      expect({ first: await apiView(pgApp, first), second: await apiView(pgApp, second), transcript: await readTranscript(pgApp) }).toEqual(before);

      const again = await runAdmin(sqliteApp.config, "migrate-to-postgres", "--from", file, "--to", url);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain("already holds data (2 accounts)");
      expect(again.stderr).toContain("does not merge");
      expect(await countAccounts(url)).toBe(2);
    } finally {
      await pgApp?.close();
      rmSync(sqliteApp.dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it("refuses text holding U+0000, naming its table, column and row, and leaves the target empty", async () => {
    const app = await startTestApp();
    const account = await app.account();
    const agent = (await app.request("POST", "/v1/agents", { key: account.key, body: { name: "Front desk", system_prompt: "Answer.", voice_id: "flite-slt" } })).body;
    await app.parley.stop();
    try {
      // The API refuses NUL now; an older version's database may hold one.
      const db = openDatabase(databaseFile(app.config));
      await db.updateTable("agents").set({ name: "Front\u0000desk" }).where("id", "=", agent.id).execute();
      await db.destroy();
      const url = await cluster.createDatabase();
      const run = await runAdmin(app.config, "migrate-to-postgres", "--from", databaseFile(app.config), "--to", url);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`agents.name of the row with id ${agent.id} holds the character U+0000`);
      expect(run.stderr).toContain("nothing was copied");
      // The account went in before the agent was read: the one transaction took it back out.
      expect(run.stderr).toContain("migrate-to-postgres: accounts 1/1");
      expect(await countAccounts(url)).toBe(0);
    } finally {
      rmSync(app.dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("refuses a source that does not exist and a missing target", async () => {
    const app = await startTestApp();
    await app.close();
    const missing = await runAdmin(app.config, "migrate-to-postgres", "--from", "/nonexistent/parley.db", "--to", "postgres://127.0.0.1:1/none");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("/nonexistent/parley.db does not exist");
    const noTarget = await runAdmin(app.config, "migrate-to-postgres", "--from", "/nonexistent/parley.db");
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain("--to is required");
  });
});
