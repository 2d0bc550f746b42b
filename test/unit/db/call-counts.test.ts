import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase, type Db } from "../../../src/db/database.js";
import { migrationProvider } from "../../../src/db/migrations/index.js";
import { CallsRepository, type CallFilters } from "../../../src/db/repositories/calls.js";
import { pickWith, seededRandom } from "../../helpers/seeded-random.js";

// The call list's total for filters of status and direction only is read from counts kept by
// triggers (migration 015); these tests hold it to counting the rows, whatever wrote them.

const ACCOUNTS = ["acct_a", "acct_b"];
const DIRECTIONS = ["inbound", "outbound", "web"] as const;
const STATUSES = ["queued", "ringing", "in_progress", "completed", "failed", "no_answer"] as const;

function newFile(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), "parley-counts-")), "parley.db");
}

async function addAccounts(db: Db): Promise<void> {
  for (const id of ACCOUNTS) {
    await sql`INSERT INTO accounts (id, name, plan, credit_balance, signing_secret, limit_overrides, created_at, updated_at)
      VALUES (${id}, 'A', 'pro', 5, 's', '{}', 't', 't')`.execute(db);
  }
}

/** A new database at the latest migration, with the test's accounts. */
async function migratedWithAccounts(): Promise<Db> {
  const db = openDatabase(newFile());
  await migrateToLatest(db);
  await addAccounts(db);
  return db;
}

async function addCall(db: Db, id: string, account: string, direction: string, status: string): Promise<void> {
  await sql`INSERT INTO calls (id, account_id, agent_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, created_at, updated_at)
    VALUES (${id}, ${account}, 'agent_1', ${direction}, ${status}, '+14155550123', '+14155550100', '{}', '{}', 1, 3600, ${id}, ${id})`.execute(db);
}

/** Every filter of status and direction (each set or not), for each account: the kept total against counting. */
async function expectCountsAsCounted(db: Db): Promise<void> {
  const calls = new CallsRepository(db);
  for (const account of [...ACCOUNTS, "acct_none"]) {
    for (const status of [undefined, ...STATUSES]) {
      for (const direction of [undefined, ...DIRECTIONS]) {
        const filters: CallFilters = { status, direction };
        let q = db.selectFrom("calls").select((eb) => eb.fn.countAll<number>().as("n")).where("account_id", "=", account);
        if (status) q = q.where("status", "=", status);
        if (direction) q = q.where("direction", "=", direction);
        const counted = Number((await q.executeTakeFirstOrThrow()).n);
        expect(await calls.count(account, filters), `${account} ${status} ${direction}`).toBe(counted);
      }
    }
  }
}

describe("call counts kept by triggers (migration 015)", () => {
  it("are filled from the calls already stored when a database is upgraded", async () => {
    const file = newFile();
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("014-list-items-in-indexes")).error).toBeUndefined();
    await addAccounts(old);
    const pick = pickWith(seededRandom(1));
    for (let i = 0; i < 60; i++) await addCall(old, `call_${i}`, ACCOUNTS[i % 2]!, pick(DIRECTIONS), pick(STATUSES));
    await old.destroy();

    const db = openDatabase(file);
    // An upgrade from 014 applies 015 and whatever came after it.
    expect((await migrateToLatest(db)).applied[0]).toBe("015-call-counts");
    await expectCountsAsCounted(db);
    await db.destroy();
  });

  it("follow every insert, status, direction or account change and delete, and a rolled-back transaction leaves them as they were", async () => {
    const db = await migratedWithAccounts();
    const next = seededRandom(7);
    const pick = pickWith(next);
    for (let i = 0; i < 80; i++) await addCall(db, `call_${i}`, pick(ACCOUNTS), pick(DIRECTIONS), pick(STATUSES));
    for (let i = 0; i < 200; i++) {
      const id = `call_${Math.floor(next() * 80)}`;
      const change = next();
      if (change < 0.5) await db.updateTable("calls").set({ status: pick(STATUSES) }).where("id", "=", id).execute();
      else if (change < 0.6) await db.updateTable("calls").set({ direction: pick(DIRECTIONS) }).where("id", "=", id).execute();
      else if (change < 0.7) await db.updateTable("calls").set({ account_id: pick(ACCOUNTS) }).where("id", "=", id).execute();
      else if (change < 0.85) await db.updateTable("calls").set({ updated_at: String(i) }).where("id", "=", id).execute(); // no counted column
      else await db.deleteFrom("calls").where("id", "=", id).execute();
    }
    // Several calls changed in one statement, then a transaction that fails half-way.
    await db.updateTable("calls").set({ status: "completed" }).where("status", "=", "in_progress").execute();
    await expect(
      db.transaction().execute(async (trx) => {
        await addCall(trx, "call_rolled_back", "acct_a", "inbound", "queued");
        await trx.updateTable("calls").set({ status: "failed" }).where("account_id", "=", "acct_b").execute();
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await expectCountsAsCounted(db);
    await db.destroy();
  });

  it("are what the call list reads for its total when it filters by status and direction only; any other filter counts the calls", async () => {
    const db = await migratedWithAccounts();
    await addCall(db, "call_1", "acct_a", "outbound", "completed");
    await addCall(db, "call_2", "acct_a", "inbound", "completed");
    // A kept count that disagrees with the rows shows which of the two was read.
    await db.updateTable("call_counts").set({ n: 1000 }).where("account_id", "=", "acct_a").where("direction", "=", "outbound").execute();
    const calls = new CallsRepository(db);
    expect(await calls.count("acct_a", {})).toBe(1001);
    expect(await calls.count("acct_a", { status: "completed", direction: "outbound" })).toBe(1000);
    expect(await calls.count("acct_a", { direction: "inbound" })).toBe(1);
    expect(await calls.count("acct_a", { agentId: "agent_1" })).toBe(2);
    expect(await calls.count("acct_a", { direction: "outbound", createdFrom: "a" })).toBe(1);
    await db.destroy();
  });
});
