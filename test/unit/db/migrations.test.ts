import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase } from "../../../src/db/database.js";

describe("database migrations", () => {
  it("create the schema on a new file, then leave an existing database and its rows alone", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "nested", "parley.db");
    const first = openDatabase(file);
    expect((await migrateToLatest(first)).applied).toEqual(["001-initial"]);
    const mode = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(first);
    expect(mode.rows[0]?.journal_mode).toBe("wal");
    await first
      .insertInto("accounts")
      .values({ id: "acct_1", name: "A", plan: "pro", credit_balance: 5, signing_secret: "s", media_token: "m", limit_overrides: "{}", created_at: "t", updated_at: "t" })
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
      .values({ id: "acct_1", name: "A", plan: "pro", credit_balance: 5, signing_secret: "s", media_token: "m", limit_overrides: "{}", created_at: "t", updated_at: "t" })
      .execute();
    const charge = (id: string) => ({ id, account_id: "acct_1", amount: -1, balance_after: 4, reason: "call", call_id: "call_1", description: null, created_at: "t" });
    await db.insertInto("ledger").values(charge("led_1")).execute();
    await expect(db.insertInto("ledger").values(charge("led_2")).execute()).rejects.toThrow(/UNIQUE/);
    await db.destroy();
  });
});
