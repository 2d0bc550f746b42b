import type { Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import type { AccountRecord } from "../db/repositories/accounts.js";

/** Whole started minutes, as calls are billed. */
export function billedMinutes(durationSeconds: number): number {
  return Math.ceil(durationSeconds / 60);
}

/** A call (placed, or connected over a media stream) needs one minute's credit to start: else 402. */
export function requireCallCredit(account: AccountRecord, credits: Config["credits"]): void {
  if (account.credit_balance < credits.perMinute) {
    throw new ApiError(
      402,
      "insufficient_credits",
      `A call needs at least ${credits.perMinute} credit(s) (one minute) to start; the balance is ${account.credit_balance}`,
    );
  }
}
