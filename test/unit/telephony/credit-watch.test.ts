import { describe, expect, it } from "vitest";
import { CreditReservations } from "../../../src/services/credit-reservations.js";
import { CREDIT_CHECK_LEAD_MS, CREDIT_HANG_UP_MARGIN_MS, CreditWatch } from "../../../src/telephony/credit-watch.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const MINUTE = 60_000;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** An account whose balance the test sets, and calls of it watched on one fake clock. */
function setUp(balance: number) {
  const clock = new FakeClock();
  const reservations = new CreditReservations(1);
  const account = { id: "acct_1", credit_balance: balance };
  let unreadable = false;
  const exhausted = new Map<string, { at: number; withinMs: number }>();
  const startCall = (callId: string) => {
    reservations.reserveFirstMinute(account, callId);
    const watch = new CreditWatch({
      callId,
      reservations,
      account: async () => {
        if (unreadable) throw new Error("SQLITE_BUSY: database is locked");
        return { ...account };
      },
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
  return { clock, reservations, account, exhausted, startCall, advance, setUnreadable: (v: boolean) => (unreadable = v) };
}

describe("credit watch: a running call stays inside its account's credit", () => {
  it("reserves each next minute ahead of time, and asks for the call to end before a minute the balance cannot cover", async () => {
    const { exhausted, startCall, advance, reservations } = setUp(2);
    startCall("call_a");
    await advance(MINUTE - CREDIT_CHECK_LEAD_MS);
    expect(reservations.minutesOf("call_a")).toBe(2);
    expect(exhausted.size).toBe(0);
    await advance(MINUTE);
    // At 1:45 the third minute is not covered: the call must be over before 2:00, with the margin.
    expect(exhausted.get("call_a")).toEqual({ at: 2 * MINUTE - CREDIT_CHECK_LEAD_MS, withinMs: CREDIT_CHECK_LEAD_MS - CREDIT_HANG_UP_MARGIN_MS });
    expect(reservations.minutesOf("call_a")).toBe(2);
  });

  it("shares the balance between the account's calls: the one that cannot get its next minute ends, the other goes on", async () => {
    const { exhausted, startCall, advance, reservations, clock } = setUp(3);
    startCall("call_a");
    await advance(10_000);
    startCall("call_b");
    // call_a takes the third credit at 0:45; call_b's check at 0:55 finds none left.
    await advance(MINUTE);
    expect(reservations.minutesOf("call_a")).toBe(2);
    expect([...exhausted.keys()]).toEqual(["call_b"]);
    expect(exhausted.get("call_b")!.at).toBe(10_000 + MINUTE - CREDIT_CHECK_LEAD_MS);
    expect(clock.now()).toBeGreaterThan(exhausted.get("call_b")!.at);
    expect(reservations.heldBy("acct_1")).toBe(3);
  });

  it("lets the call go on when credits were added meanwhile", async () => {
    const { exhausted, startCall, advance, account, reservations } = setUp(1);
    startCall("call_a");
    account.credit_balance = 5;
    await advance(3 * MINUTE);
    expect(exhausted.size).toBe(0);
    expect(reservations.minutesOf("call_a")).toBe(4);
  });

  it("reads the balance again after a database error, and ends the call only once the goodbye would no longer fit", async () => {
    const { exhausted, startCall, advance, setUnreadable, reservations } = setUp(5);
    startCall("call_a");
    setUnreadable(true);
    await advance(MINUTE - CREDIT_CHECK_LEAD_MS + 4_000);
    expect(exhausted.size).toBe(0);
    setUnreadable(false);
    await advance(2_000);
    expect(reservations.minutesOf("call_a")).toBe(2);

    setUnreadable(true);
    await advance(MINUTE);
    const ended = exhausted.get("call_a")!;
    expect(ended).toBeDefined();
    expect(ended.at).toBeGreaterThan(2 * MINUTE - CREDIT_CHECK_LEAD_MS);
    expect(ended.at + ended.withinMs).toBe(2 * MINUTE - CREDIT_HANG_UP_MARGIN_MS);
  });

  it("stops checking once stopped", async () => {
    const { exhausted, startCall, advance } = setUp(1);
    startCall("call_a").stop();
    await advance(2 * MINUTE);
    expect(exhausted.size).toBe(0);
  });
});
