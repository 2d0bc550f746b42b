import { afterEach, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase, type Db } from "../../../src/db/database.js";
import { CreditReservations } from "../../../src/services/credit-reservations.js";
import { CREDIT_CHECK_LEAD_MS, CREDIT_HANG_UP_MARGIN_MS, CreditWatch } from "../../../src/telephony/credit-watch.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const MINUTE = 60_000;
const tick = () => new Promise((resolve) => setImmediate(resolve));

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
});

/** An account whose balance the test sets (in a database of its own), and calls of it watched on one fake clock. */
async function setUp(balance: number) {
  const clock = new FakeClock();
  const db = openDatabase(":memory:");
  opened.push(db);
  await migrateToLatest(db);
  await db
    .insertInto("accounts")
    .values({ id: "acct_1", name: "A", plan: "pro", credit_balance: balance, signing_secret: "s", media_token_hash: null, media_token_created_at: null, limit_overrides: "{}", created_at: "t", updated_at: "t" })
    .execute();
  const reservations = new CreditReservations(db, 1, "node_test");
  let unreadable = false;
  // A database error while a minute is reserved.
  const reserve = reservations.tryReserveMinute.bind(reservations);
  reservations.tryReserveMinute = async (accountId, callId) => {
    if (unreadable) throw new Error("SQLITE_BUSY: database is locked");
    return reserve(accountId, callId);
  };
  const setBalance = (credits: number) => db.updateTable("accounts").set({ credit_balance: credits }).where("id", "=", "acct_1").execute();
  const exhausted = new Map<string, { at: number; withinMs: number }>();
  const startCall = async (callId: string) => {
    await db.transaction().execute((trx) => reservations.reserveFirstMinute(trx, "acct_1", callId));
    const watch = new CreditWatch({
      callId,
      accountId: "acct_1",
      reservations,
      onExhausted: (withinMs) => exhausted.set(callId, { at: clock.now(), withinMs }),
      clock,
    });
    watch.start();
    return watch;
  };
  /** Moves the clock on in small steps, letting the balance reads settle. */
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 1000) {
      clock.advance(Math.min(1000, ms - t));
      await tick();
    }
  };
  return { clock, reservations, setBalance, exhausted, startCall, advance, setUnreadable: (v: boolean) => (unreadable = v) };
}

describe("credit watch: a running call stays inside its account's credit", () => {
  it("reserves each next minute ahead of time, and asks for the call to end before a minute the balance cannot cover", async () => {
    const { exhausted, startCall, advance, reservations } = await setUp(2);
    await startCall("call_a");
    await advance(MINUTE - CREDIT_CHECK_LEAD_MS);
    expect(await reservations.minutesOf("call_a")).toBe(2);
    expect(exhausted.size).toBe(0);
    await advance(MINUTE);
    // At 1:45 the third minute is not covered: the call must be over before 2:00, with the margin.
    expect(exhausted.get("call_a")).toEqual({ at: 2 * MINUTE - CREDIT_CHECK_LEAD_MS, withinMs: CREDIT_CHECK_LEAD_MS - CREDIT_HANG_UP_MARGIN_MS });
    expect(await reservations.minutesOf("call_a")).toBe(2);
  });

  it("shares the balance between the account's calls: the one that cannot get its next minute ends, the other goes on", async () => {
    const { exhausted, startCall, advance, reservations, clock } = await setUp(3);
    await startCall("call_a");
    await advance(10_000);
    await startCall("call_b");
    // call_a takes the third credit at 0:45; call_b's check at 0:55 finds none left.
    await advance(MINUTE);
    expect(await reservations.minutesOf("call_a")).toBe(2);
    expect([...exhausted.keys()]).toEqual(["call_b"]);
    expect(exhausted.get("call_b")!.at).toBe(10_000 + MINUTE - CREDIT_CHECK_LEAD_MS);
    expect(clock.now()).toBeGreaterThan(exhausted.get("call_b")!.at);
    expect(await reservations.heldBy("acct_1")).toBe(3);
  });

  it("lets the call go on when credits were added meanwhile", async () => {
    const { exhausted, startCall, advance, setBalance, reservations } = await setUp(1);
    await startCall("call_a");
    await setBalance(5);
    await advance(3 * MINUTE);
    expect(exhausted.size).toBe(0);
    expect(await reservations.minutesOf("call_a")).toBe(4);
  });

  it("reads the balance again after a database error, and ends the call only once the goodbye would no longer fit", async () => {
    const { exhausted, startCall, advance, setUnreadable, reservations } = await setUp(5);
    await startCall("call_a");
    setUnreadable(true);
    await advance(MINUTE - CREDIT_CHECK_LEAD_MS + 4_000);
    expect(exhausted.size).toBe(0);
    setUnreadable(false);
    await advance(2_000);
    expect(await reservations.minutesOf("call_a")).toBe(2);

    setUnreadable(true);
    await advance(MINUTE);
    const ended = exhausted.get("call_a")!;
    expect(ended).toBeDefined();
    expect(ended.at).toBeGreaterThan(2 * MINUTE - CREDIT_CHECK_LEAD_MS);
    expect(ended.at + ended.withinMs).toBe(2 * MINUTE - CREDIT_HANG_UP_MARGIN_MS);
  });

  it("stops checking once stopped", async () => {
    const { exhausted, startCall, advance } = await setUp(1);
    (await startCall("call_a")).stop();
    await advance(2 * MINUTE);
    expect(exhausted.size).toBe(0);
  });
});
