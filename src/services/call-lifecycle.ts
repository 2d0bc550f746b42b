import type { Db } from "../db/database.js";
import { CallsRepository, LIVE_CALL_STATUSES, type CallRecord } from "../db/repositories/calls.js";
import { nowIso } from "../core/time.js";
import type { AccountsService } from "./accounts.js";
import type { CallEvents } from "./call-events.js";
import type { CreditReservations } from "./credit-reservations.js";

/** How an outbound call that never connected ended. */
export type UnansweredOutcome = "busy" | "no_answer" | "failed";

/**
 * The states of outbound calls before they connect: `queued` until the account has a free
 * concurrent-call slot (`ringing` + `in_progress` under its limit), oldest first; `ringing`
 * while the carrier dials; then `in_progress` (answered; from there LiveCallsService ends and
 * bills it) or `busy` / `no_answer` / `failed` (never connected, never billed). Each
 * transition checks the state it leaves, so a call settled meanwhile (POST /end) is not
 * moved again.
 */
export class CallLifecycle {
  private readonly calls: CallsRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { accounts: AccountsService; events: CallEvents; reservations: CreditReservations },
  ) {
    this.calls = new CallsRepository(db);
  }

  /** Accounts that have calls waiting. */
  async accountsWithQueuedCalls(): Promise<string[]> {
    const rows = await this.db.selectFrom("calls").select("account_id").distinct().where("status", "=", "queued").execute();
    return rows.map((r) => r.account_id);
  }

  /**
   * The account's oldest queued call, now `ringing`, if a concurrent-call slot is free; null
   * otherwise. Credit is checked again here, as the call is dialled: a queued call whose first
   * minute the balance (less what the account's calls under way hold) no longer covers is
   * ended `failed` with reason `insufficient_credits`, and the next one is tried.
   */
  async claimNext(accountId: string): Promise<CallRecord | null> {
    const account = await this.deps.accounts.find(accountId);
    if (!account) return null;
    const limit = this.deps.accounts.limitsOf(account).concurrentCalls;
    let reserved: string | undefined;
    return this.db.transaction().execute(async (trx) => {
      if ((await this.calls.countInStatus(accountId, LIVE_CALL_STATUSES, trx)) >= limit) return null;
      for (;;) {
        const next = await trx
          .selectFrom("calls")
          .select("id")
          .where("account_id", "=", accountId)
          .where("status", "=", "queued")
          .orderBy("created_at")
          .orderBy("id")
          .executeTakeFirst();
        if (!next) return null;
        const at = nowIso();
        const queued = (await this.calls.findById(next.id, trx))!;
        if (!this.deps.reservations.tryReserveMinute(account, next.id)) {
          const failed = { status: "failed", ended_at: at, updated_at: at } as const;
          await this.calls.update(next.id, failed, trx);
          await this.deps.events.entered({ ...queued, ...failed }, "queued", trx, { failureReason: "insufficient_credits" });
          continue;
        }
        reserved = next.id;
        const ringing = { ...queued, status: "ringing", updated_at: at } as const;
        await this.calls.update(next.id, { status: "ringing", updated_at: at }, trx);
        await this.deps.events.entered(ringing, "queued", trx);
        return ringing;
      }
    }).catch((err: unknown) => {
      // The claim did not happen: nor does its reservation.
      if (reserved) this.deps.reservations.release(reserved);
      throw err;
    });
  }

  /** `ringing` -> `in_progress`; false when the call was settled meanwhile. */
  async answered(callId: string): Promise<boolean> {
    return this.move(callId, "ringing", () => {
      const at = nowIso();
      return { status: "in_progress", answered_at: at, updated_at: at };
    });
  }

  /** `ringing` -> busy / no_answer / failed, ended now, nothing billed. */
  async unanswered(callId: string, outcome: UnansweredOutcome): Promise<boolean> {
    try {
      return await this.move(callId, "ringing", () => {
        const at = nowIso();
        return { status: outcome, ended_at: at, updated_at: at };
      });
    } finally {
      this.deps.reservations.release(callId);
    }
  }

  private async move(callId: string, from: CallRecord["status"], patch: () => Partial<CallRecord>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const call = await this.calls.findById(callId, trx);
      if (call?.status !== from) return false;
      const change = patch();
      await this.calls.update(callId, change, trx);
      await this.deps.events.entered({ ...call, ...change }, from, trx);
      return true;
    });
  }
}
