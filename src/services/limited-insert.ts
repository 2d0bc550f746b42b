import type { ApiError } from "../core/api-error.js";
import type { Db } from "../db/database.js";

/** A plan limit on how many rows of a kind an account may have. */
export interface RowLimit {
  limit: number;
  /** Counts the rows the limit applies to, inside the insert's transaction. */
  count: (trx: Db) => Promise<number>;
  /** The error for an account already at its limit. */
  refusal: () => ApiError;
}

/**
 * Runs `insert` unless the account is at the limit. The count and the insert share one
 * transaction, so two concurrent requests cannot both pass the last free slot.
 */
export async function insertWithinLimit(db: Db, rule: RowLimit, insert: (trx: Db) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if ((await rule.count(trx)) >= rule.limit) throw rule.refusal();
    await insert(trx);
  });
}
