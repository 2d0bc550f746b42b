import { ApiError } from "../core/api-error.js";
import type { AccountRecord } from "../db/repositories/accounts.js";

/**
 * Credit promised to the calls this process is dialling or running. Calls are charged at
 * their end, by whole started minute; until then each holds the minutes it has started here,
 * so the calls of one account can never together spend more than its balance: a call starts
 * (or is dialled) only when a minute is left after what the account's other calls hold, and
 * goes on into its next minute only if that minute is free too (see CreditWatch). The balance
 * therefore never goes below zero. Kept in memory: after a restart no call is live.
 */
export class CreditReservations {
  private readonly held = new Map<string, { accountId: string; minutes: number }>();

  constructor(private readonly perMinute: number) {}

  /** Credits the account's calls hold now. */
  heldBy(accountId: string): number {
    let minutes = 0;
    for (const entry of this.held.values()) if (entry.accountId === accountId) minutes += entry.minutes;
    return minutes * this.perMinute;
  }

  /** Minutes call `callId` holds (0 when none). */
  minutesOf(callId: string): number {
    return this.held.get(callId)?.minutes ?? 0;
  }

  /** Whether the balance (read just now) less what the account's calls hold covers one more minute. */
  coversMinute(account: Pick<AccountRecord, "id" | "credit_balance">): boolean {
    return account.credit_balance - this.heldBy(account.id) >= this.perMinute;
  }

  /**
   * Reserves one more minute for call `callId` of `account`, whose balance was read just now;
   * false when what is left after the account's other reservations does not cover it.
   */
  tryReserveMinute(account: Pick<AccountRecord, "id" | "credit_balance">, callId: string): boolean {
    if (!this.coversMinute(account)) return false;
    const entry = this.held.get(callId) ?? { accountId: account.id, minutes: 0 };
    entry.minutes += 1;
    this.held.set(callId, entry);
    return true;
  }

  /** Reserves the first minute of a call that is starting; 402 `insufficient_credits` when it is not covered. */
  reserveFirstMinute(account: Pick<AccountRecord, "id" | "credit_balance">, callId: string): void {
    if (!this.tryReserveMinute(account, callId)) throw this.refusal(account);
  }

  /** The refusal of a call the account's credit cannot start. */
  refusal(account: Pick<AccountRecord, "id" | "credit_balance">): ApiError {
    const held = this.heldBy(account.id);
    return new ApiError(
      402,
      "insufficient_credits",
      `A call needs ${this.perMinute} credit(s) (one minute) to start; the balance is ${account.credit_balance}` +
        (held > 0 ? `, of which ${held} are held by the account's calls under way` : ""),
    );
  }

  /** The call has ended (or never started): what it held is free again. */
  release(callId: string): void {
    this.held.delete(callId);
  }
}
