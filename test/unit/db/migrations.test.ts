import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator, sql, type Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase } from "../../../src/db/database.js";
import { migrationProvider } from "../../../src/db/migrations/index.js";
import { AccountsRepository } from "../../../src/db/repositories/accounts.js";
import { AgentsRepository } from "../../../src/db/repositories/agents.js";
import { EventsRepository } from "../../../src/db/repositories/events.js";
import { hashToken } from "../../../src/core/token-hash.js";

/** Every migration from `name` on, in order: what an upgrade from the one before it applies. */
async function migrationsFrom(name: string): Promise<string[]> {
  const names = Object.keys(await migrationProvider.getMigrations()).sort();
  expect(names).toContain(name);
  return names.slice(names.indexOf(name));
}

describe("database migrations", () => {
  it("create the schema on a new file, then leave an existing database and its rows alone", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "nested", "parley.db");
    const first = openDatabase(file);
    expect((await migrateToLatest(first)).applied).toEqual(["001-initial", "002-nullable-call-numbers", "003-events", "004-phone-number-approval", "005-hashed-media-token", "006-webhook-deliveries", "007-campaign-runner", "008-call-results", "009-appointment-reminders", "010-endpointing-mode", "011-web-call-tokens", "012-retention", "013-list-indexes", "014-list-items-in-indexes", "015-call-counts", "016-idempotency-secrets", "017-canonical-phone-numbers", "018-reminder-call-inbound", "019-nodes", "020-credit-holds", "021-rate-windows", "022-change-notifications", "023-rate-leases", "024-number-carriers", "025-carrier-stream-tokens", "026-delivery-notifications", "027-secrets", "028-agent-tools", "029-knowledge-bases", "030-agent-intents", "031-agent-knowledge-bases", "032-agent-handoffs", "033-agent-transfer-mode", "034-test-runs", "035-agent-redact", "036-call-supervision", "037-test-audio", "038-test-run-scenario-count"]);
    const mode = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(first);
    expect(mode.rows[0]?.journal_mode).toBe("wal");
    await first
      .insertInto("accounts")
      .values({ id: "acct_1", name: "A", plan: "pro", credit_balance: 5, signing_secret: "s", media_token_hash: null, media_token_created_at: null, limit_overrides: "{}", created_at: "t", updated_at: "t" })
      .execute();
    await first.destroy();

    const second = openDatabase(file);
    expect((await migrateToLatest(second)).applied).toEqual([]);
    const row = await second.selectFrom("accounts").selectAll().executeTakeFirstOrThrow();
    expect(row.credit_balance).toBe(5);
    await second.destroy();
  });

  it("refuse a second charge for the same call at the database level", async () => {
    const db = openDatabase(":memory:");
    await migrateToLatest(db);
    await db
      .insertInto("accounts")
      .values({ id: "acct_1", name: "A", plan: "pro", credit_balance: 5, signing_secret: "s", media_token_hash: null, media_token_created_at: null, limit_overrides: "{}", created_at: "t", updated_at: "t" })
      .execute();
    const charge = (id: string) => ({ id, account_id: "acct_1", amount: -1, balance_after: 4, reason: "call", call_id: "call_1", description: null, created_at: "t" });
    await db.insertInto("ledger").values(charge("led_1")).execute();
    await expect(db.insertInto("ledger").values(charge("led_2")).execute()).rejects.toThrow(/UNIQUE/);
    await db.destroy();
  });

  it("upgrade a database of the first version, keeping its calls", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    const { error } = await new Migrator({ db: old, provider: migrationProvider }).migrateTo("001-initial");
    expect(error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, media_token, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', 'm', '{}', 't', 't')`.execute(old);
    await sql`INSERT INTO calls (id, account_id, agent_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, created_at, updated_at)
      VALUES ('call_1', 'acct_1', 'agent_1', 'outbound', 'completed', '+14155550123', '+14155550100', '{}', '{}', 1, 3600, 't', 't')`.execute(old);
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("002-nullable-call-numbers"));
    const call = await db.selectFrom("calls").selectAll().where("id", "=", "call_1").executeTakeFirstOrThrow();
    expect(call.phone_number).toBe("+14155550123");
    await sql`INSERT INTO calls (id, account_id, agent_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, created_at, updated_at)
      VALUES ('call_2', 'acct_1', 'agent_1', 'web', 'in_progress', NULL, NULL, '{}', '{}', 1, 3600, 't', 't')`.execute(db);
    const indexes = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'calls' AND name LIKE 'calls_%'`.execute(db);
    expect(indexes.rows.map((r) => r.name).sort()).toEqual(["calls_account_outcome", "calls_account_status", "calls_agent_status", "calls_analysis_pending", "calls_campaign_status", "calls_contact", "calls_list", "calls_live_node", "calls_with_content"]);
    await db.destroy();
  });

  it("keep phone numbers' statuses through the approval upgrade (004): active ones count as approved, one active holder per number, pending claims side by side", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("003-events")).error).toBeUndefined();
    for (const id of ["acct_1", "acct_2", "acct_3"]) {
      await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, media_token, limit_overrides, created_at, updated_at)
        VALUES (${id}, 'A', 'pro', 5, 's', ${`mt_${id}`}, '{}', 't', 't')`.execute(old);
    }
    const number = (into: Kysely<any>, id: string, account: string, status: string) =>
      sql`INSERT INTO phone_numbers (id, account_id, phone_number, friendly_name, country, status, created_at, updated_at)
        VALUES (${id}, ${account}, '+14155550100', 'x', 'US', ${status}, ${`2024-01-0${id.slice(-1)}T00:00:00.000Z`}, 't')`.execute(into);
    await number(old, "pn_1", "acct_1", "active");
    await number(old, "pn_2", "acct_2", "inactive");
    await number(old, "pn_3", "acct_3", "inactive");
    await old.destroy();

    const db = openDatabase(file);
    await migrateToLatest(db);
    const rows = await db.selectFrom("phone_numbers").select(["id", "status", "approved_at"]).orderBy("id").execute();
    expect(rows).toEqual([
      { id: "pn_1", status: "active", approved_at: "2024-01-01T00:00:00.000Z" },
      { id: "pn_2", status: "inactive", approved_at: null },
      { id: "pn_3", status: "inactive", approved_at: null },
    ]);
    // Pending claims of a number held active elsewhere, one per account; a second active holder is refused.
    await number(db, "pn_4", "acct_2", "pending");
    await number(db, "pn_5", "acct_3", "pending");
    await expect(number(db, "pn_6", "acct_3", "pending")).rejects.toThrow(/UNIQUE/);
    await expect(sql`UPDATE phone_numbers SET status = 'active' WHERE id = 'pn_5'`.execute(db)).rejects.toThrow(/UNIQUE/);
    await db.destroy();
  });

  it("hash the media tokens in place (005): a token in use keeps opening its account, and no plain text is left", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("004-phone-number-approval")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, media_token, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', 'mt_inTwiML', '{}', '2024-05-01T00:00:00.000Z', 't')`.execute(old);
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("005-hashed-media-token"));
    const row = await db.selectFrom("accounts").selectAll().executeTakeFirstOrThrow();
    expect(row).not.toHaveProperty("media_token");
    expect(JSON.stringify(row)).not.toContain("mt_inTwiML");
    expect(row.media_token_created_at).toBe("2024-05-01T00:00:00.000Z");
    expect((await new AccountsRepository(db).findByMediaTokenHash(hashToken("mt_inTwiML")))?.id).toBe("acct_1");
    await db.destroy();
  });

  it("number the stored events in the order they were written (006), and go on from there", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("005-hashed-media-token")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(old);
    // Same timestamp, ids out of alphabetical order: only the order of writing tells them apart.
    for (const id of ["evt_c", "evt_a", "evt_b"]) {
      await sql`INSERT INTO events (id, account_id, name, call_id, data, created_at) VALUES (${id}, 'acct_1', 'call.started', NULL, '{}', 't')`.execute(old);
    }
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("006-webhook-deliveries"));
    await new EventsRepository(db).append([{ id: "evt_0", account_id: "acct_1", name: "call.ringing", call_id: null, data: {}, created_at: "u" }]);
    const rows = await db.selectFrom("events").select(["id", "seq"]).orderBy("seq").execute();
    expect(rows).toEqual([
      { id: "evt_c", seq: 1 },
      { id: "evt_a", seq: 2 },
      { id: "evt_b", seq: 3 },
      { id: "evt_0", seq: 4 },
    ]);
    await db.destroy();
  });

  it("pause the campaigns stored before the runner (007) instead of dialling them on the upgrade; in_progress contacts become calling", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("006-webhook-deliveries")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(old);
    for (const [id, status] of [["cmp_s", "scheduled"], ["cmp_r", "running"], ["cmp_c", "completed"]]) {
      await sql`INSERT INTO campaigns (id, account_id, name, agent_id, status, max_concurrent, retry_no_answer, schedule, contact_count, created_at, updated_at)
        VALUES (${id}, 'acct_1', 'C', 'agent_1', ${status}, 2, 0, NULL, 1, 't', 't')`.execute(old);
    }
    await sql`INSERT INTO campaign_contacts (id, campaign_id, position, phone, context, status, call_id, attempts, updated_at)
      VALUES ('cc_1', 'cmp_r', 0, '+14155550100', '{}', 'in_progress', NULL, 1, 't')`.execute(old);
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("007-campaign-runner"));
    const campaigns = await db.selectFrom("campaigns").select(["id", "status", "paused_reason", "max_attempts", "retry_delay_minutes"]).orderBy("id").execute();
    expect(campaigns).toEqual([
      { id: "cmp_c", status: "completed", paused_reason: null, max_attempts: 3, retry_delay_minutes: 60 },
      { id: "cmp_r", status: "paused", paused_reason: "upgrade", max_attempts: 3, retry_delay_minutes: 60 },
      { id: "cmp_s", status: "paused", paused_reason: "upgrade", max_attempts: 3, retry_delay_minutes: 60 },
    ]);
    const contact = await db.selectFrom("campaign_contacts").selectAll().executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ status: "calling", zone: null, failures: 0, next_attempt_at: null });
    await db.destroy();
  });

  it("move the outcome stored before analyses existed to its column (008), and clear what was no analysis", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("007-campaign-runner")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(old);
    for (const [id, status, analysis] of [["call_dnc", "completed", '{"outcome":"do_not_call"}'], ["call_tr", "transferred", null], ["call_plain", "completed", null]]) {
      await sql`INSERT INTO calls (id, account_id, agent_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, analysis, created_at, updated_at)
        VALUES (${id}, 'acct_1', 'agent_1', 'outbound', ${status}, '+14155550123', '+14155550100', '{}', '{}', 1, 3600, ${analysis}, 't', 't')`.execute(old);
    }
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("008-call-results"));
    const calls = await db.selectFrom("calls").select(["id", "outcome", "analysis", "analysis_pending", "actions"]).orderBy("id").execute();
    expect(calls).toEqual([
      { id: "call_dnc", outcome: "do_not_call", analysis: null, analysis_pending: 0, actions: null },
      { id: "call_plain", outcome: null, analysis: null, analysis_pending: 0, actions: null },
      { id: "call_tr", outcome: "transferred", analysis: null, analysis_pending: 0, actions: null },
    ]);
    const agentColumns = await sql<{ name: string; dflt_value: string }>`SELECT name, dflt_value FROM pragma_table_info('agents') WHERE name = 'analysis_fields'`.execute(db);
    expect(agentColumns.rows).toEqual([{ name: "analysis_fields", dflt_value: "'[]'" }]);
    await db.destroy();
  });

  it("keep the agents stored before endpointing modes (010) as they were: fixed, with their endpointing_ms", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("009-appointment-reminders")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(old);
    for (const [id, ms] of [["agent_1", 500], ["agent_2", 1200]] as const) {
      await sql`INSERT INTO agents (id, account_id, name, system_prompt, voice_id, language, model, temperature, max_tokens, interruption_threshold,
          end_call_phrases, status, metadata, transfer_enabled, transfer_message, endpointing_ms, created_at, updated_at)
        VALUES (${id}, 'acct_1', 'A', 'p', 'flite-slt', 'en-US', 'llm-large', 0.7, 150, 0.5, '[]', 'active', '{}', 0, 'hold', ${ms}, 't', 't')`.execute(old);
    }
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("010-endpointing-mode"));
    const agents = new AgentsRepository(db);
    expect(await agents.findById("agent_1")).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 500 });
    expect(await agents.findById("agent_2")).toMatchObject({ endpointing_mode: "fixed", endpointing_ms: 1200 });
    await db.destroy();
  });

  it("keep the agents stored before transfer modes (033) transferring as they did: cold", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("032-agent-handoffs")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(old);
    await sql`INSERT INTO agents (id, account_id, name, system_prompt, voice_id, language, model, temperature, max_tokens, interruption_threshold,
        end_call_phrases, status, metadata, transfer_enabled, transfer_number, transfer_message, endpointing_ms, created_at, updated_at)
      VALUES ('agent_1', 'acct_1', 'A', 'p', 'flite-slt', 'en-US', 'llm-large', 0.7, 150, 0.5, '[]', 'active', '{}', 1, '+14155550100', 'hold', 500, 't', 't')`.execute(old);
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("033-agent-transfer-mode"));
    expect(await new AgentsRepository(db).findById("agent_1")).toMatchObject({ transfer_enabled: true, transfer_number: "+14155550100", transfer_mode: "cold" });
    await db.destroy();
  });

  it("give the accounts stored before retention (012) the service's default, and index their calls that still hold content", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("011-web-call-tokens")).error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES ('acct_1', 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(old);
    await old.destroy();

    const db = openDatabase(file);
    expect((await migrateToLatest(db)).applied).toEqual(await migrationsFrom("012-retention"));
    expect(await new AccountsRepository(db).findById("acct_1")).toMatchObject({ retention_days: null });
    const plan = await sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT id FROM calls WHERE account_id = 'acct_1'
      AND (transcript IS NOT NULL OR recording_path IS NOT NULL OR analysis IS NOT NULL OR actions IS NOT NULL OR context <> '{}') AND created_at < 'z'`.execute(db);
    expect(plan.rows.map((r) => r.detail).join()).toContain("USING INDEX calls_with_content");
    await db.destroy();
  });
});
