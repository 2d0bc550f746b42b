import type { Db } from "../db/database.js";
import { CallsRepository, LIVE_CALL_STATUSES, type CallRecord } from "../db/repositories/calls.js";
import { nowIso } from "../core/time.js";
import type { AccountsService } from "./accounts.js";
import type { CallEvents } from "./call-events.js";

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
    private readonly deps: { accounts: AccountsService; events: CallEvents },
  ) {
    this.calls = new CallsRepository(db);
  }

  /** Accounts that have calls waiting. */
  async accountsWithQueuedCalls(): Promise<string[]> {
    const rows = await this.db.selectFrom("calls").select("account_id").distinct().where("status", "=", "queued").execute();
    return rows.map((r) => r.account_id);
  }

  /** The account's oldest queued call, now `ringing`, if a slot is free; null otherwise. */
  async claimNext(accountId: string): Promise<CallRecord | null> {
    const account = await this.deps.accounts.find(accountId);
    if (!account) return null;
    const limit = this.deps.accounts.limitsOf(account).concurrentCalls;
    return this.db.transaction().execute(async (trx) => {
      if ((await this.calls.countInStatus(accountId, LIVE_CALL_STATUSES, trx)) >= limit) return null;
      const next = await trx
        .selectFrom("calls")
        .select("id")
        .where("account_id", "=", accountId)
        .where("status", "=", "queued")
        .orderBy("created_at")
        .orderBy("id")
        .executeTakeFirst();
      if (!next) return null;
      await this.calls.update(next.id, { status: "ringing", updated_at: nowIso() }, trx);
      const ringing = (await this.calls.findById(next.id, trx))!;
      await this.deps.events.entered(ringing, "queued", trx);
      return ringing;
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
    return this.move(callId, "ringing", () => {
      const at = nowIso();
      return { status: outcome, ended_at: at, updated_at: at };
    });
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
