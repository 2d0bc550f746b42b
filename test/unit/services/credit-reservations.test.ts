import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase, type Db } from "../../../src/db/database.js";
import { CreditReservations } from "../../../src/services/credit-reservations.js";
import { insertCallRow } from "../../helpers/call-rows.js";

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
});

/** A database with one account of `balance` credits (one credit a minute). */
async function setUp(balance: number) {
  const db = openDatabase(":memory:");
  opened.push(db);
  await migrateToLatest(db);
  // Call rows without their agent: only their status matters here.
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  await db
    .insertInto("accounts")
    .values({ id: "acct_1", name: "A", plan: "pro", credit_balance: balance, signing_secret: "s", media_token_hash: null, media_token_created_at: null, limit_overrides: "{}", created_at: "t", updated_at: "t" })
    .execute();
  const reservations = new CreditReservations(db, 1, "node_a");
  const holdFirst = (callId: string) => db.transaction().execute((trx) => reservations.tryReserveFirstMinute(trx, "acct_1", callId));
  return { db, reservations, holdFirst };
}

describe("credit reservations in the database", () => {
  it("hold a call's first minute only if its transaction commits, and refuse a minute past the balance", async () => {
    const { db, reservations, holdFirst } = await setUp(2);
    await expect(
      db.transaction().execute(async (trx) => {
        expect(await reservations.tryReserveFirstMinute(trx, "acct_1", "call_gone")).toBe(true);
        throw new Error("the call's insert failed");
      }),
    ).rejects.toThrow("insert failed");
    expect(await reservations.heldBy("acct_1")).toBe(0);

    expect(await holdFirst("call_a")).toBe(true);
    expect(await holdFirst("call_b")).toBe(true);
    expect(await holdFirst("call_c")).toBe(false);
    expect(await reservations.tryReserveMinute("acct_1", "call_a")).toBe(false);
    const rows = await db.selectFrom("credit_holds").selectAll().orderBy("call_id").execute();
    expect(rows.map((r) => [r.call_id, r.account_id, r.minutes, r.node_id])).toEqual([
      ["call_a", "acct_1", 1, "node_a"],
      ["call_b", "acct_1", 1, "node_a"],
    ]);
    await expect(db.transaction().execute((trx) => reservations.reserveFirstMinute(trx, "acct_1", "call_c"))).rejects.toMatchObject({
      status: 402,
      code: "insufficient_credits",
      message: expect.stringContaining("the balance is 2, of which 2 are held"),
    });
  });

  it("never hold a next minute again for a call whose hold was released (it ended meanwhile)", async () => {
    const { reservations, holdFirst } = await setUp(10);
    expect(await holdFirst("call_a")).toBe(true);
    expect(await reservations.tryReserveMinute("acct_1", "call_a")).toBe(true);
    expect(await reservations.minutesOf("call_a")).toBe(2);
    await reservations.release("call_a");
    expect(await reservations.tryReserveMinute("acct_1", "call_a")).toBe(false);
    expect(await reservations.minutesOf("call_a")).toBe(0);
    expect(await reservations.heldBy("acct_1")).toBe(0);
  });

  it("delete, on releaseEnded, the holds of calls no longer live and keep those of live calls", async () => {
    const { db, reservations } = await setUp(10);
    const calls: Record<string, string> = {};
    for (const status of ["ringing", "in_progress", "completed", "failed", "queued"] as const) {
      const call = await insertCallRow(db, { account_id: "acct_1", agent_id: "agent_1", status });
      calls[status] = call.id;
      expect(await db.transaction().execute((trx) => reservations.tryReserveFirstMinute(trx, "acct_1", call.id))).toBe(true);
    }
    // And one whose call row is gone.
    expect(await db.transaction().execute((trx) => reservations.tryReserveFirstMinute(trx, "acct_1", "call_without_row"))).toBe(true);
    expect(await reservations.releaseEnded()).toBe(4);
    const left = await db.selectFrom("credit_holds").select("call_id").execute();
    expect(left.map((r) => r.call_id).sort()).toEqual([calls.ringing, calls.in_progress].sort());
    expect(await reservations.heldBy("acct_1")).toBe(2);
  });
});
