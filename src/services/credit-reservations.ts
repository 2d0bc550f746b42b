import { sql } from "kysely";
import { ApiError } from "../core/api-error.js";
import { nowIso } from "../core/time.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { Db } from "../db/database.js";
import { LIVE_CALL_STATUSES } from "../db/repositories/calls.js";

/** An account's balance and the minutes its calls hold, read in one statement (one snapshot). */
interface Standing {
  balance: number;
  heldMinutes: number;
}

/**
 * Credit promised to the calls being dialled or running, on every node sharing the database.
 * Calls are charged at their end, by whole started minute; until then each holds the minutes it
 * has started (a `credit_holds` row), so the calls of one account can never together spend more
 * than its balance: a call starts (or is dialled) only when a minute is left after what the
 * account's other calls hold, and goes on into its next minute only if that minute is free too
 * (see CreditWatch). The balance therefore never goes below zero.
 *
 * A reservation takes the account's lock (holdAccountLock) and reads the balance and the holds
 * together before writing, so two nodes cannot both take the last minute. A call's first
 * minute is held in the transaction that makes it live (inserted `in_progress`, or moved to
 * `ringing`), and released in the one that ends it where there is one: the hold and the call's
 * state commit together. A hold left by a crash between a call's end and its release is
 * deleted when a node starts (`releaseEnded`, from NodePresence.start, before it takes calls).
 */
export class CreditReservations {
  constructor(
    private readonly db: Db,
    private readonly perMinute: number,
    /** This node: recorded with the holds it makes. */
    private readonly nodeId: string,
  ) {}

  /** Credits the account's calls hold now. */
  async heldBy(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectNoFrom(heldMinutes(accountId).as("minutes")).executeTakeFirst();
    return Number(row?.minutes ?? 0) * this.perMinute;
  }

  /** Minutes call `callId` holds (0 when none). */
  async minutesOf(callId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("credit_holds").select("minutes").where("call_id", "=", callId).executeTakeFirst();
    return Number(row?.minutes ?? 0);
  }

  /** Whether the balance less what the account's calls hold covers one more minute, now (a check; reserving checks again). */
  async coversMinute(accountId: string, db: Db = this.db): Promise<boolean> {
    return this.covers(await this.standing(accountId, db));
  }

  /**
   * Reserves the first minute of call `callId`, which holds none yet, in `trx`: the transaction
   * that makes the call live, so that both commit or neither. False when what is left after the
   * account's other calls' holds does not cover it.
   */
  async tryReserveFirstMinute(trx: Db, accountId: string, callId: string): Promise<boolean> {
    return this.reserve(trx, accountId, callId, "first");
  }

  /** As tryReserveFirstMinute, but a minute not covered is a 402 `insufficient_credits`. */
  async reserveFirstMinute(trx: Db, accountId: string, callId: string): Promise<void> {
    if (!(await this.tryReserveFirstMinute(trx, accountId, callId))) throw await this.refusal(accountId, trx);
  }

  /**
   * Reserves one more minute for running call `callId`, in a transaction of its own. False when
   * it is not covered, or when the call holds nothing any more: it has ended meanwhile (here or
   * closed by another node) and its hold was released, which a late reservation must not undo.
   */
  async tryReserveMinute(accountId: string, callId: string): Promise<boolean> {
    return this.db.transaction().execute((trx) => this.reserve(trx, accountId, callId, "next"));
  }

  /** The refusal of a call the account's credit cannot start. */
  async refusal(accountId: string, db: Db = this.db): Promise<ApiError> {
    const { balance, heldMinutes } = (await this.standing(accountId, db)) ?? { balance: 0, heldMinutes: 0 };
    const held = heldMinutes * this.perMinute;
    return new ApiError(
      402,
      "insufficient_credits",
      `A call needs ${this.perMinute} credit(s) (one minute) to start; the balance is ${balance}` +
        (held > 0 ? `, of which ${held} are held by the account's calls under way` : ""),
    );
  }

  /** The call has ended (or never started): what it held is free again. In `db`'s transaction when given. */
  async release(callId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom("credit_holds").where("call_id", "=", callId).execute();
  }

  /**
   * Deletes the holds of calls that are no longer live (`ringing` or `in_progress`): left by a
   * process that stopped between a call's end and the release of its hold. Run as a node starts
   * (NodePresence.start), after it has closed its previous process's calls. A hold being made
   * meanwhile on another node is not yet committed, with its call: it is not seen, so not
   * deleted. Returns how many were deleted.
   */
  async releaseEnded(): Promise<number> {
    const result = await this.db
      .deleteFrom("credit_holds")
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("calls").select("calls.id").whereRef("calls.id", "=", "credit_holds.call_id").where("calls.status", "in", LIVE_CALL_STATUSES))),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private async reserve(trx: Db, accountId: string, callId: string, minute: "first" | "next"): Promise<boolean> {
    // Reservations for one account take turns across nodes (a no-op on SQLite, one writer):
    // what is read below cannot change before the hold is written.
    await holdAccountLock(trx, accountId);
    if (!this.covers(await this.standing(accountId, trx))) return false;
    if (minute === "first") {
      await trx.insertInto("credit_holds").values({ call_id: callId, account_id: accountId, minutes: 1, node_id: this.nodeId, created_at: nowIso() }).execute();
      return true;
    }
    const added = await trx
      .updateTable("credit_holds")
      .set((eb) => ({ minutes: eb("minutes", "+", 1) }))
      .where("call_id", "=", callId)
      .executeTakeFirst();
    return added.numUpdatedRows > 0n;
  }

  /**
   * The balance and the holds in one statement: a call ending on another node charges its
   * account and releases its hold in one transaction, so both are seen before it or both after.
   */
  private async standing(accountId: string, db: Db): Promise<Standing | undefined> {
    const row = await db
      .selectFrom("accounts")
      .select(["credit_balance", heldMinutes(accountId).as("held_minutes")])
      .where("id", "=", accountId)
      .executeTakeFirst();
    return row && { balance: Number(row.credit_balance), heldMinutes: Number(row.held_minutes) };
  }

  private covers(standing: Standing | undefined): boolean {
    return standing !== undefined && standing.balance - standing.heldMinutes * this.perMinute >= this.perMinute;
  }
}

/** The minutes all of the account's calls hold now, as one expression. */
function heldMinutes(accountId: string) {
  return sql<number>`(SELECT COALESCE(SUM(minutes), 0) FROM credit_holds WHERE account_id = ${accountId})`;
}
