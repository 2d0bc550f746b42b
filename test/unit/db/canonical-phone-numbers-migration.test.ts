import { Migrator, sql, type Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase } from "../../../src/db/database.js";
import { migrationProvider } from "../../../src/db/migrations/index.js";

/** A database of the version before 017, with numbers written as the API took them then. */
async function databaseBefore017() {
  const db = openDatabase(":memory:");
  expect((await new Migrator({ db, provider: migrationProvider }).migrateTo("015-call-counts")).error).toBeUndefined();
  for (const id of ["acct_1", "acct_2"]) {
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES (${id}, 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(db);
  }
  return db;
}

const at = (day: number) => `2024-01-0${day}T00:00:00.000Z`;

async function doNotCall(db: Kysely<any>, id: string, account: string, number: string, day: number, source = "api", callId: string | null = null) {
  await sql`INSERT INTO do_not_call (id, account_id, phone_number, source, call_id, created_at) VALUES (${id}, ${account}, ${number}, ${source}, ${callId}, ${at(day)})`.execute(db);
}

async function phoneNumber(db: Kysely<any>, id: string, account: string, number: string, status: string, day: number) {
  await sql`INSERT INTO phone_numbers (id, account_id, phone_number, friendly_name, country, status, approved_at, created_at, updated_at)
    VALUES (${id}, ${account}, ${number}, 'x', 'GB', ${status}, ${status === "active" ? at(day) : null}, ${at(day)}, ${at(day)})`.execute(db);
}

describe("migration 017: every stored phone number in canonical form", () => {
  it("merges do-not-call entries that become one number into the oldest, per account; keeps numbers it cannot read", async () => {
    const db = await databaseBefore017();
    await doNotCall(db, "dnc_new", "acct_1", "+447700900123", 2);
    await doNotCall(db, "dnc_old", "acct_1", "+4407700900123", 1, "callee_request", "call_1");
    await doNotCall(db, "dnc_other", "acct_2", "+4407700900123", 3);
    await doNotCall(db, "dnc_bad", "acct_1", "+4477009", 4);
    await migrateToLatest(db);

    const rows = await db.selectFrom("do_not_call").select(["id", "account_id", "phone_number", "source", "call_id"]).orderBy("id").execute();
    expect(rows).toEqual([
      { id: "dnc_bad", account_id: "acct_1", phone_number: "+4477009", source: "api", call_id: null },
      { id: "dnc_old", account_id: "acct_1", phone_number: "+447700900123", source: "callee_request", call_id: "call_1" },
      { id: "dnc_other", account_id: "acct_2", phone_number: "+447700900123", source: "api", call_id: null },
    ]);
    await db.destroy();
  });

  it("keeps one live row per account and one active holder per number: the active row, then the oldest, wins; the others are released", async () => {
    const db = await databaseBefore017();
    // One account, the number active and claimed again in another spelling.
    await phoneNumber(db, "pn_a_active", "acct_1", "+442071838750", "active", 2);
    await phoneNumber(db, "pn_a_claim", "acct_1", "+4402071838750", "pending", 1);
    // Two accounts holding one number active in two spellings: the older holder keeps it.
    await phoneNumber(db, "pn_b_1", "acct_1", "+442071838751", "active", 1);
    await phoneNumber(db, "pn_b_2", "acct_2", "+4402071838751", "active", 2);
    // Claims side by side stay pending; a released row just changes its spelling.
    await phoneNumber(db, "pn_c_claim", "acct_2", "+4402071838750", "pending", 3);
    await phoneNumber(db, "pn_d_old", "acct_2", "+4402071838752", "inactive", 1);
    await migrateToLatest(db);

    const rows = await db.selectFrom("phone_numbers").select(["id", "account_id", "phone_number", "status"]).orderBy("id").execute();
    expect(rows).toEqual([
      { id: "pn_a_active", account_id: "acct_1", phone_number: "+442071838750", status: "active" },
      { id: "pn_a_claim", account_id: "acct_1", phone_number: "+442071838750", status: "inactive" },
      { id: "pn_b_1", account_id: "acct_1", phone_number: "+442071838751", status: "active" },
      { id: "pn_b_2", account_id: "acct_2", phone_number: "+442071838751", status: "inactive" },
      { id: "pn_c_claim", account_id: "acct_2", phone_number: "+442071838750", status: "pending" },
      { id: "pn_d_old", account_id: "acct_2", phone_number: "+442071838752", status: "inactive" },
    ]);
    await db.destroy();
  });

  it("rewrites campaign contacts, calls, campaigns, agents and appointments; the call counts stay as they were", async () => {
    const db = await databaseBefore017();
    await sql`INSERT INTO agents (id, account_id, name, system_prompt, voice_id, language, model, temperature, max_tokens, interruption_threshold,
        end_call_phrases, status, metadata, transfer_enabled, transfer_number, transfer_message, endpointing_ms, created_at, updated_at)
      VALUES ('agent_1', 'acct_1', 'A', 'p', 'flite-slt', 'en-US', 'llm-large', 0.7, 150, 0.5, '[]', 'active', '{}', 1, '+4402071838799', 'hold', 500, 't', 't')`.execute(db);
    await sql`INSERT INTO campaigns (id, account_id, name, agent_id, status, max_concurrent, retry_no_answer, schedule, contact_count, from_number, created_at, updated_at)
      VALUES ('cmp_1', 'acct_1', 'C', 'agent_1', 'running', 2, 0, NULL, 2, '+4402071838750', 't', 't')`.execute(db);
    for (const [id, position, phone] of [["cc_1", 0, "+4407700900123"], ["cc_2", 1, "+14155550100"]] as const) {
      await sql`INSERT INTO campaign_contacts (id, campaign_id, position, phone, context, status, call_id, attempts, updated_at)
        VALUES (${id}, 'cmp_1', ${position}, ${phone}, '{}', 'pending', NULL, 0, 't')`.execute(db);
    }
    for (const [id, status, phone, from] of [["call_1", "queued", "+4407700900124", "+4402071838750"], ["call_2", "completed", "+14155550123", "+14155550100"]] as const) {
      await sql`INSERT INTO calls (id, account_id, agent_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, created_at, updated_at)
        VALUES (${id}, 'acct_1', 'agent_1', 'outbound', ${status}, ${phone}, ${from}, '{}', '{}', 1, 3600, 't', 't')`.execute(db);
    }
    await sql`UPDATE calls SET status = 'transferred', transfer_number = '+4402071838798' WHERE id = 'call_2'`.execute(db);
    await sql`INSERT INTO appointments (id, account_id, customer_phone, date, time, duration_minutes, status, created_at, updated_at)
      VALUES ('apt_1', 'acct_1', '+4407700900125', '2030-01-02', '09:00', 30, 'scheduled', 't', 't')`.execute(db);
    const countsBefore = await db.selectFrom("call_counts").selectAll().orderBy("status").execute();
    await migrateToLatest(db);

    expect(await db.selectFrom("campaign_contacts").select(["id", "phone"]).orderBy("id").execute()).toEqual([
      { id: "cc_1", phone: "+447700900123" },
      { id: "cc_2", phone: "+14155550100" },
    ]);
    expect(await db.selectFrom("calls").select(["id", "phone_number", "from_number", "transfer_number"]).orderBy("id").execute()).toEqual([
      { id: "call_1", phone_number: "+447700900124", from_number: "+442071838750", transfer_number: null },
      { id: "call_2", phone_number: "+14155550123", from_number: "+14155550100", transfer_number: "+442071838798" },
    ]);
    expect(await db.selectFrom("campaigns").select("from_number").execute()).toEqual([{ from_number: "+442071838750" }]);
    expect(await db.selectFrom("agents").select("transfer_number").execute()).toEqual([{ transfer_number: "+442071838799" }]);
    expect(await db.selectFrom("appointments").select("customer_phone").execute()).toEqual([{ customer_phone: "+447700900125" }]);
    expect(await db.selectFrom("call_counts").selectAll().orderBy("status").execute()).toEqual(countsBefore);
    await db.destroy();
  });
});
