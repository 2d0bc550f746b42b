import { sql } from "kysely";
import type { Db } from "../db/database.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import { CallsRepository, LIVE_CALL_STATUSES, type CallRecord } from "../db/repositories/calls.js";
import { nowIso } from "../core/time.js";
import type { AccountsService } from "./accounts.js";
import type { CallEvents } from "./call-events.js";
import type { CreditReservations } from "./credit-reservations.js";
import type { DestinationPolicy } from "./destination-policy.js";
import type { DoNotCallService } from "./do-not-call.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { reminderCallOpen } from "./reminder-calling-hours.js";

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
    private readonly deps: {
      accounts: AccountsService;
      events: CallEvents;
      reservations: CreditReservations;
      destinations: DestinationPolicy;
      doNotCall: DoNotCallService;
      /** The schedulers' clock: a reminder call's calling hours are read on it. */
      now: () => number;
      /** This node: the calls it claims are dialled, and run, here. */
      nodeId: string;
    },
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
   * otherwise. What creation checked is checked again as the call is dialled, since a call may
   * wait long in the queue (see `refusalAtDial`): a queued call that no longer passes is ended
   * `failed` with the reason in its `call.failed` event, and the next one is tried.
   */
  async claimNext(accountId: string): Promise<CallRecord | null> {
    const account = await this.deps.accounts.find(accountId);
    if (!account) return null;
    const limit = this.deps.accounts.limitsOf(account).concurrentCalls;
    // The first minute's hold is written in this transaction (see refusalAtDial): a claim that
    // does not happen leaves none.
    return this.db.transaction().execute(async (trx) => {
      // Nodes claiming for one account take turns: on PostgreSQL two could otherwise both count
      // a free slot and both take the same oldest call (READ COMMITTED).
      await holdAccountLock(trx, accountId);
      if ((await this.calls.countInStatus(accountId, LIVE_CALL_STATUSES, trx)) >= limit) return null;
      for (;;) {
        const next = await trx
          .selectFrom("calls")
          .select("id")
          .where("account_id", "=", accountId)
          .where("status", "=", "queued")
          // Calls made one by one go before campaign calls (the fairness rule, see CampaignRunner).
          .orderBy(sql`campaign_id IS NOT NULL`)
          .orderBy("created_at")
          .orderBy("id")
          .executeTakeFirst();
        if (!next) return null;
        const at = nowIso();
        const queued = (await this.calls.findById(next.id, trx))!;
        const refusal = await this.refusalAtDial(account, queued, trx);
        if (refusal) {
          const failed = { status: "failed", ended_at: at, updated_at: at, failure_reason: refusal } as const;
          await this.calls.update(next.id, failed, trx);
          await this.deps.events.entered({ ...queued, ...failed }, "queued", trx);
          continue;
        }
        const ringing = { ...queued, status: "ringing", updated_at: at, node_id: this.deps.nodeId } as const;
        // Only if still queued: a cancel (which takes no account lock) may have settled it since.
        const moved = await trx.updateTable("calls").set({ status: "ringing", updated_at: at, node_id: this.deps.nodeId }).where("id", "=", next.id).where("status", "=", "queued").executeTakeFirst();
        if (moved.numUpdatedRows === 0n) {
          await this.deps.reservations.release(next.id, trx);
          continue;
        }
        await this.deps.events.entered(ringing, "queued", trx);
        return ringing;
      }
    });
  }

  /**
   * Why a queued call may not be dialled now, or null (then its first minute's credit is
   * reserved): its `from_number` is no longer an active number of the account
   * (`invalid_from_number`: released or revoked since), its destination is no longer allowed
   * (`invalid_phone_number`: the number that allowed its country is gone), it was put on the
   * do-not-call list (`do_not_call`), it is a reminder call and the callee's calling hours have
   * closed while it waited (`outside_calling_hours`), or the balance less
   * what the account's calls under way hold no longer covers a minute (`insufficient_credits`).
   * The reservation is written in `trx`, the claim's.
   */
  private async refusalAtDial(account: AccountRecord, call: CallRecord, trx: Db): Promise<string | null> {
    if (call.from_number && !(await new PhoneNumbersRepository(trx).findActive(account.id, call.from_number))) return "invalid_from_number";
    if (call.phone_number && !(await this.deps.destinations.permits(account.id, call.phone_number, trx))) return "invalid_phone_number";
    if (call.phone_number && (await this.deps.doNotCall.isListed(account.id, call.phone_number, trx))) return "do_not_call";
    if (call.appointment_id && call.phone_number) {
      const agent = await new AgentsRepository(trx).findAnyById(call.agent_id, trx);
      if (!reminderCallOpen(call.phone_number, agent?.metadata ?? {}, this.deps.now())) return "outside_calling_hours";
    }
    if (!(await this.deps.reservations.tryReserveFirstMinute(trx, account.id, call.id))) return "insufficient_credits";
    return null;
  }

  /** `ringing` -> `in_progress`; false when the call was settled meanwhile. */
  async answered(callId: string): Promise<boolean> {
    return this.move(callId, "ringing", () => {
      const at = nowIso();
      return { status: "in_progress", answered_at: at, updated_at: at };
    });
  }

  /** `ringing` -> busy / no_answer / failed, ended now, nothing billed; `failureReason` is kept and goes into its event. */
  async unanswered(callId: string, outcome: UnansweredOutcome, failureReason?: string): Promise<boolean> {
    try {
      return await this.move(callId, "ringing", () => {
        const at = nowIso();
        return { status: outcome, ended_at: at, updated_at: at, failure_reason: failureReason ?? null };
      });
    } finally {
      await this.deps.reservations.release(callId);
    }
  }

  private async move(callId: string, from: CallRecord["status"], patch: () => Partial<CallRecord>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Two nodes may move one call at once (its own, and one closing it as lost): one waits.
      await this.calls.lockForChange(callId, trx);
      const call = await this.calls.findById(callId, trx);
      if (call?.status !== from) return false;
      const change = patch();
      await this.calls.update(callId, change, trx);
      await this.deps.events.entered({ ...call, ...change }, from, trx);
      return true;
    });
  }
}
